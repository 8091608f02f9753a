package serving

// The kinds of model the service serves register themselves with package
// recsys (recsys.Register) from the packages that implement them; these
// imports make sure a persisted model of any of them can be read back.
import (
	_ "recsys/recsys/content" // the content metric
	_ "recsys/recsys/febr"    // febr, its variants and febr-blend
	_ "recsys/recsys/mf"      // bpr, wrmf, ials and mfauc
)
