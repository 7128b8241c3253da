package cliflags

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// S3.Open's messages say what is wrong: only a missing bucket tells to
// create it, and no credentials names the flags that give them.
func TestS3OpenMessages(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow")
	open := func(f S3) string {
		t.Helper()
		st, err := f.Open(context.Background())
		if err == nil {
			t.Fatalf("opened %+v: %v", f, st)
		}
		return err.Error()
	}
	base := S3{Endpoint: srv.Endpoint(), Region: "us-east-1", Bucket: "c2flow", AccessKey: srv.Access, SecretKey: srv.Secret, PathStyle: true}
	f := base
	f.SecretKey = "wrong"
	if msg := open(f); !strings.Contains(msg, "check the access key and secret") || strings.Contains(msg, "create it first") {
		t.Errorf("wrong secret: %s", msg)
	}
	f = base
	f.Bucket = "typo"
	if msg := open(f); !strings.Contains(msg, `bucket "typo" does not exist`) || !strings.Contains(msg, "create it first") {
		t.Errorf("missing bucket: %s", msg)
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	f = base
	f.AccessKey, f.SecretKey = "", ""
	if msg := open(f); !strings.Contains(msg, "--s3-access-key") || !strings.Contains(msg, "no S3 credentials") || strings.Contains(msg, "create it first") {
		t.Errorf("no credentials: %s", msg)
	}
}
