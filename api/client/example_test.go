package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/api/client"
)

// The examples run against a real server holding a coffee shop's
// purchases, with itemknn and ease trained and itemknn the default; they
// find its address and keys in RECSYS_URL, RECSYS_APP_KEY and
// RECSYS_ADMIN_KEY, as a program deployed next to the server would.

func ExampleNew() {
	// The application key opens the data routes; the admin key also opens
	// /admin/* (training, experiments).
	c := client.New(os.Getenv("RECSYS_URL"),
		client.WithKey(os.Getenv("RECSYS_APP_KEY")),
		client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	ctx := context.Background()
	if err := c.Ready(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")

	// Without a key the server refuses; Code tells the failure apart.
	_, err := client.New(os.Getenv("RECSYS_URL")).Recommend(ctx, "alice", client.RecommendOptions{})
	fmt.Println(client.Code(err))
	// Output:
	// ready
	// unauthorized
}

func ExampleClient_AddInteractions() {
	c := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_APP_KEY")))
	// A customer looks at two products and buys one. Events are stored all
	// or nothing: one invalid event fails the batch.
	n, err := c.AddInteractions(context.Background(), []api.InteractionIn{
		{UserID: "kim", ItemID: "espresso-machine", Type: "view"},
		{UserID: "kim", ItemID: "coffee-grinder", Type: "view"},
		{UserID: "kim", ItemID: "coffee-grinder", Type: "purchase"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored", n)

	// A failure the service reports is an *client.Error naming the field.
	_, err = c.AddInteractions(context.Background(), []api.InteractionIn{{UserID: "kim"}})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Details[0].Field)
	}
	// Output:
	// stored 3
	// 400 invalid interactions[0].item_id
}

func ExampleClient_Recommend() {
	c := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_APP_KEY")))
	// What alice has not bought yet that she is likeliest to want.
	recs, err := c.Recommend(context.Background(), "alice", client.RecommendOptions{N: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("by", recs.Model)
	for _, it := range recs.Items {
		fmt.Println(it.ItemID)
	}
	// Output:
	// by itemknn
	// tamper
	// knock-box
	// mug-set
}

func ExampleClient_Similar() {
	c := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_APP_KEY")))
	// The products bought with an espresso machine.
	sim, err := c.Similar(context.Background(), "espresso-machine", client.SimilarOptions{N: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range sim.Items {
		fmt.Println(it.ItemID)
	}
	// Output:
	// milk-frother
	// tamper
	// coffee-grinder
}

func ExampleClient_Rerank() {
	c := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_APP_KEY")))
	// The shop's own candidates (a search page, a promotion) in alice's
	// order; ids the server has never seen come back apart.
	out, err := c.Rerank(context.Background(), "alice",
		[]string{"teapot", "tamper", "gift-card", "knock-box", "kettle"}, "")
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range out.Items {
		fmt.Println(it.ItemID)
	}
	fmt.Println("unknown:", out.UnknownItems)
	// Output:
	// tamper
	// knock-box
	// kettle
	// teapot
	// unknown: [gift-card]
}

func ExampleClient_StartExperiment() {
	admin := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_ADMIN_KEY")))
	ctx := context.Background()
	// Half the users get itemknn's lists, half ease's, while the server
	// counts impressions, clicks and purchases per arm.
	x, err := admin.StartExperiment(ctx, api.ExperimentIn{
		Name: "itemknn vs ease",
		Arms: []api.Arm{{Model: "itemknn", Share: 50}, {Model: "ease", Share: 50}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.Name, x.State)

	// Later: the per-arm counts and the test, then the end.
	x, err = admin.Experiment(ctx, x.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, arm := range x.Arms {
		fmt.Printf("%s %d%%: %d lists\n", arm.Model, arm.Share, arm.Lists)
	}
	x, err = admin.StopExperiment(ctx, x.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.State)
	// Output:
	// itemknn vs ease running
	// itemknn 50%: 0 lists
	// ease 50%: 0 lists
	// stopped
}
