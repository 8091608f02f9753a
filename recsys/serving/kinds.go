package serving

// The kinds of model the service serves register themselves with package
// recsys (recsys.Register) from the packages that implement them; these
// imports make sure a persisted model of any of them can be read back.
import (
	_ "github.com/recsys-engine/recsys/recsys/content" // the content metric
	_ "github.com/recsys-engine/recsys/recsys/febr"    // febr, its variants and febr-blend
	_ "github.com/recsys-engine/recsys/recsys/mf"      // bpr, wrmf, ials and mfauc
)
