package main

import _ "embed"

// openAPISpec is the HTTP contract, served at /openapi.yaml and checked
// against the live server by the contract tests.
//
//go:embed openapi.yaml
var openAPISpec []byte
