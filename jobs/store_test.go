package jobs

import "github.com/recsys-engine/recsys/storage/storagetest"

var mustStore = storagetest.Open
