package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
)

// downloadWorkers are the ranged GETs DownloadFile has in flight.
const downloadWorkers = 4

// journal records which chunks of a download are on disk, for the object
// as it was (its ETag and size): a replaced object starts over.
type journal struct {
	ETag  string `json:"etag"`
	Size  int64  `json:"size"`
	Chunk int64  `json:"chunk"`
	Done  []bool `json:"done"`
}

// DownloadFile fetches a large object into dst: ranged GETs, each chunk
// recorded once it is on disk, so that a download cut (a killed host, a
// lost network) resumes where it stopped; the whole file's SHA-256 is
// checked against the object's before it is renamed into place, so dst is
// either absent or whole and correct. Processes downloading one dst take
// turns (a lock file beside it).
func (s *Store) DownloadFile(ctx context.Context, key, dst string) error {
	_, err := s.download(ctx, key, dst)
	return err
}

// download is DownloadFile; it returns the bytes fetched this time.
func (s *Store) download(ctx context.Context, key, dst string) (int64, error) {
	head, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return 0, s.classify("head", key, err)
	}
	want, etag, size := head.Metadata[metaSHA], aws.ToString(head.ETag), aws.ToInt64(head.ContentLength)
	if want == "" {
		return 0, fmt.Errorf("s3 download %s/%s: %w (the object records no SHA-256)", s.cfg.Bucket, s.key(key), ErrChecksum)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	unlock, err := flock.Lock(ctx, dst+".lock")
	if err != nil {
		return 0, fmt.Errorf("s3 download %s: %w", dst, err)
	}
	defer unlock()
	part, jpath := dst+".part", dst+".part.json"
	chunk := s.cfg.DownloadChunk
	if chunk <= 0 {
		chunk = 64 << 20
	}
	var j journal
	if b, err := os.ReadFile(jpath); err != nil || json.Unmarshal(b, &j) != nil || j.ETag != etag || j.Size != size || j.Chunk != chunk {
		j = journal{ETag: etag, Size: size, Chunk: chunk, Done: make([]bool, (size+chunk-1)/chunk)}
		os.Remove(part)
	}
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return 0, err
	}
	fetched, err := s.fetchChunks(ctx, key, f, &j, jpath)
	if err != nil {
		return fetched, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fetched, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fetched, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		// Not resumed from: the next try fetches it all again.
		os.Remove(jpath)
		os.Remove(part)
		return fetched, fmt.Errorf("s3 download %s/%s: %w (recorded %q, read %s)", s.cfg.Bucket, s.key(key), ErrChecksum, want, got)
	}
	if err := f.Sync(); err != nil {
		return fetched, err
	}
	if err := os.Rename(part, dst); err != nil {
		return fetched, err
	}
	os.Remove(jpath)
	return fetched, nil
}

// fetchChunks fetches the chunks j lacks into f, each GET conditional on
// the object being the one j was started on; each chunk is synced, then
// recorded in the journal at jpath.
func (s *Store) fetchChunks(ctx context.Context, key string, f *os.File, j *journal, jpath string) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu      sync.Mutex
		fetched int64
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	for range downloadWorkers {
		wg.Go(func() {
			for i := range next {
				off := int64(i) * j.Chunk
				n := min(j.Chunk, j.Size-off)
				if err := s.fetchChunk(ctx, key, f, j.ETag, off, n); err != nil {
					fail(err)
					continue
				}
				if err := f.Sync(); err != nil {
					fail(err)
					continue
				}
				mu.Lock()
				j.Done[i] = true
				fetched += n
				b, err := json.Marshal(j)
				if err == nil {
					err = atomicfile.WriteBytes(jpath, b)
				}
				mu.Unlock()
				if err != nil {
					fail(err)
				}
			}
		})
	}
	for i, done := range j.Done {
		if done {
			continue
		}
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return fetched, first
	}
	return fetched, ctx.Err()
}

// fetchChunk fetches n bytes at off into f. The SDK retries a request
// that fails; a body cut while it is read (a server restarting) is
// fetched again, with the store's backoff, up to its attempts.
func (s *Store) fetchChunk(ctx context.Context, key string, f *os.File, etag string, off, n int64) error {
	var err error
	for attempt := range s.cfg.MaxAttempts {
		if attempt > 0 {
			select {
			case <-time.After(min(s.cfg.MaxBackoff, time.Duration(attempt)*100*time.Millisecond)):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		var out *s3.GetObjectOutput
		out, err = s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key)),
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)), IfMatch: aws.String(etag)})
		if err != nil {
			return s.classify("download", key, err)
		}
		var got int64
		got, err = io.CopyN(io.NewOffsetWriter(f, off), out.Body, n)
		out.Body.Close()
		if err == nil && got == n {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return s.readErr("download", key, fmt.Errorf("range %d+%d: %w", off, n, err))
}
