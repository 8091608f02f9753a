package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/storage/postgres"
)

// Role is what a serve process does among the replicas of one PostgreSQL
// database (serve --role; docs/operations.md#roles).
type Role string

const (
	// RoleAll answers every route and takes part in the election of the
	// training leader: the only role on a bbolt file, and the default.
	RoleAll Role = "all"
	// RoleServe answers every route and follows the models the store
	// announces, but never takes the training lock: a job asked here is
	// queued in the shared queue for a train (or all) process to run.
	RoleServe Role = "serve"
	// RoleTrain takes part in the election and runs the jobs and the
	// retrain triggers, and answers only /healthz, /readyz, /metrics and
	// /admin/*.
	RoleTrain Role = "train"
)

// roles are the values --role accepts.
var roles = []Role{RoleAll, RoleServe, RoleTrain}

// parseRole reads --role; an empty value (RECSYS_ROLE set to nothing) is
// the default, all.
func parseRole(s string) (Role, error) {
	if s == "" {
		return RoleAll, nil
	}
	for _, r := range roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("--role %q: want all (serve requests and train), serve (serve requests, never train) or train (run the jobs, answer /admin/* and the health routes)", s)
}

// checkRole refuses a role that the database cannot give its meaning. A
// bbolt file is opened by one process at a time, which then is the only
// one that can train on it and the only one that can serve it: a serve
// process there would queue jobs nobody runs, and a train process would
// keep the data from any server. Config's zero Role is RoleAll.
func checkRole(c Config) error {
	switch c.Role {
	case "", RoleAll:
		return nil
	case RoleServe, RoleTrain:
		if !postgres.IsDSN(c.DB) {
			return fmt.Errorf("--role %s needs a PostgreSQL database that serve and train processes share (--db postgres://...): "+
				"a bbolt file is opened by one process, which must both serve and train, so leave --role at all there", c.Role)
		}
		return nil
	default:
		_, err := parseRole(string(c.Role))
		return err
	}
}

// serves reports whether the process answers the data and recommendation
// routes.
func (r Role) serves() bool { return r != RoleTrain }

// trains reports whether the process takes part in the election of the
// training leader.
func (r Role) trains() bool { return r != RoleServe }

// String is the role's name, "all" for the zero Role.
func (r Role) String() string {
	if r == "" {
		return string(RoleAll)
	}
	return string(r)
}

// roleGauge is recsys_role, 1 with the process's role as its label, so
// that a dashboard can count the processes of each role and an alert can
// tell a replica started with the wrong one.
func roleGauge(r Role) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "recsys_role",
		Help:        "1, labelled with the process's --role: all (serves and trains), serve (serves, never trains) or train (runs the jobs, serves no data).",
		ConstLabels: prometheus.Labels{"role": r.String()}})
	g.Set(1)
	return g
}
