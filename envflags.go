package main

import (
	"flag"
	"io"
	"strconv"
	"time"
)

// envFlags is a command's flag set whose flags may take their defaults
// from environment variables. It remembers which variable feeds which
// flag, so that the configuration reference (docs/configuration.md) is
// generated from the flag definitions themselves and cannot drift from
// them.
type envFlags struct {
	*flag.FlagSet
	env map[string]string // flag name → the variable its default comes from
}

// newEnvFlags returns an empty flag set for the command name that writes
// its usage and errors to stderr.
func newEnvFlags(name string, stderr io.Writer) *envFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &envFlags{FlagSet: fs, env: map[string]string{}}
}

// StringEnv defines a string flag whose default is the variable env when
// it is set (even to ""), def otherwise.
func (f *envFlags) StringEnv(p *string, name, env, def, usage string) {
	f.StringVar(p, name, envOr(env, def), usage)
	f.env[name] = env
}

// BoolEnv defines a boolean flag whose default the variable env sets: 1 is
// true, 0 is false, and any other value leaves def.
func (f *envFlags) BoolEnv(p *bool, name, env string, def bool, usage string) {
	switch envOr(env, "") {
	case "1":
		def = true
	case "0":
		def = false
	}
	f.BoolVar(p, name, def, usage)
	f.env[name] = env
}

// IntEnv, Int64Env, Float64Env and DurationEnv define numeric flags whose
// default is the variable env when it parses as the flag's type, def
// otherwise: a malformed variable is ignored, a malformed flag is an error.
func (f *envFlags) IntEnv(p *int, name, env string, def int, usage string) {
	f.IntVar(p, name, int(envInt(env, int64(def))), usage)
	f.env[name] = env
}

func (f *envFlags) Int64Env(p *int64, name, env string, def int64, usage string) {
	f.Int64Var(p, name, envInt(env, def), usage)
	f.env[name] = env
}

func (f *envFlags) Float64Env(p *float64, name, env string, def float64, usage string) {
	f.Float64Var(p, name, envFloat(env, def), usage)
	f.env[name] = env
}

func (f *envFlags) DurationEnv(p *time.Duration, name, env string, def time.Duration, usage string) {
	f.DurationVar(p, name, envDuration(env, def), usage)
	f.env[name] = env
}

// KeyEnv defines a flag holding a key whose default is the variable env,
// as keyFlag does: -h names the variable, never the key.
func (f *envFlags) KeyEnv(p *string, name, env, usage string) {
	keyFlag(f.FlagSet, p, name, usage, env)
	f.env[name] = env
}

// DBEnv defines --db, its default from RECSYS_DB or def, as dbFlag does.
func (f *envFlags) DBEnv(def, usage string) *string {
	f.env["db"] = envDB
	return dbFlag(f.FlagSet, def, usage)
}

func envInt(key string, def int64) int64 {
	if v, err := strconv.ParseInt(envOr(key, ""), 10, 64); err == nil {
		return v
	}
	return def
}

func envFloat(key string, def float64) float64 {
	if v, err := strconv.ParseFloat(envOr(key, ""), 64); err == nil {
		return v
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(envOr(key, "")); err == nil {
		return v
	}
	return def
}
