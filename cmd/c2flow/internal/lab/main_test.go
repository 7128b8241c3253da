package lab

import (
	"context"
	"fmt"
	"testing"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// dispatch runs the c2flow command args name, of those these tests use
// (main's table holds them all; it imports this package).
func dispatch(ctx context.Context, args []string) error {
	run := map[string]func(context.Context, []string) error{"seal": RunSeal, "submit": pipeline.RunSubmit}[args[0]]
	if run == nil {
		return fmt.Errorf("the lab tests run no command %q", args[0])
	}
	return run(ctx, args[1:])
}
