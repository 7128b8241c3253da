package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

// A download cut halfway resumes: the second try fetches only the chunks
// the first did not record, and the file is whole and correct. An object
// replaced between the cut and the retry is fetched again in full, never
// spliced from two objects.
func TestDownloadResumesByRange(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow")
	cfg := srv.Config("c2flow")
	cfg.DownloadChunk = 256 << 10
	st, err := storage.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const size = 24 << 20 // 96 chunks
	src, want := randomFile(t, size)
	if err := st.UploadFile(ctx, "params/k", src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "k")

	// Cut: the context ends once a few chunks are recorded.
	cut, stop := context.WithCancel(ctx)
	go func() {
		defer stop()
		for cut.Err() == nil {
			var j struct{ Done []bool }
			if b, err := os.ReadFile(dst + ".part.json"); err == nil && json.Unmarshal(b, &j) == nil {
				n := 0
				for _, d := range j.Done {
					if d {
						n++
					}
				}
				if n >= 8 {
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	first, err := st.DownloadCounted(cut, "params/k", dst)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cut download: fetched %d, %v", first, err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a cut download left the file in place")
	}
	second, err := st.DownloadCounted(ctx, "params/k", dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cut after %d bytes, resumed with %d of %d", first, second, size)
	if first == 0 || second >= size || first+second < size {
		t.Fatalf("fetched %d then %d of %d: not resumed", first, second, size)
	}
	if fileSum(t, dst) != want {
		t.Fatal("the resumed file differs")
	}
	if _, err := os.Stat(dst + ".part.json"); !os.IsNotExist(err) {
		t.Fatal("the journal outlived the download")
	}

	// Cut again, then the object replaced: the retry starts over.
	dst2 := filepath.Join(t.TempDir(), "k")
	cut2, stop2 := context.WithCancel(ctx)
	go func() {
		for {
			if _, err := os.Stat(dst2 + ".part.json"); err == nil {
				stop2()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	if _, err := st.DownloadCounted(cut2, "params/k", dst2); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cut download: %v", err)
	}
	src2, want2 := randomFile(t, size)
	if err := st.UploadFile(ctx, "params/k", src2); err != nil {
		t.Fatal(err)
	}
	again, err := st.DownloadCounted(ctx, "params/k", dst2)
	if err != nil {
		t.Fatal(err)
	}
	if again != size || fileSum(t, dst2) != want2 {
		t.Fatalf("after a replacement: fetched %d of %d, same content %v", again, size, fileSum(t, dst2) == want2)
	}
}
