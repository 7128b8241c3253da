package cliflags

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// The S3 secret is never printed: not as the usage's default (which a flag
// error prints), however it was given (issue 55: a worker started with a
// bad flag printed $AWS_SECRET_ACCESS_KEY to its logs).
func TestSecretNeverPrinted(t *testing.T) {
	const marker = "SECRET-MARKER-3f9a"
	t.Setenv("AWS_SECRET_ACCESS_KEY", marker)
	for _, args := range [][]string{{"--no-such-flag"}, {"-h"}, {"--s3-secret-key", marker, "--no-such-flag"}} {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		var out bytes.Buffer
		fs.SetOutput(&out)
		var s S3
		s.Add(fs)
		if err := fs.Parse(args); err == nil {
			t.Fatalf("%v: parsed", args)
		}
		if strings.Contains(out.String(), marker) || !strings.Contains(out.String(), "s3-secret-key") {
			t.Errorf("%v: the usage printed the secret (or no s3-secret-key flag):\n%s", args, out.String())
		}
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var s S3
	s.Add(fs)
	if err := fs.Parse(nil); err != nil || s.SecretKey != marker {
		t.Errorf("the secret from the environment: %q, %v", s.SecretKey, err)
	}
	if err := fs.Parse([]string{"--s3-secret-key", "given"}); err != nil || s.SecretKey != "given" {
		t.Errorf("the secret from the flag: %q, %v", s.SecretKey, err)
	}
}

// The example environment's placeholder credentials are refused at
// start, naming the file, before any request is made.
func TestPlaceholderCredentialsRefused(t *testing.T) {
	s := S3{Endpoint: "http://127.0.0.1:1", AccessKey: "change-me", SecretKey: "change-me", Bucket: "c2flow"}
	if _, err := s.Open(t.Context()); err == nil || !strings.Contains(err.Error(), "c2flow.env.example") {
		t.Errorf("placeholder credentials: %v, want refused naming the example", err)
	}
}
