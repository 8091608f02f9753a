package jobs

import "recsys/storage/storagetest"

var mustStore = storagetest.Open
