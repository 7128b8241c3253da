package storage

import "context"

// DownloadCounted is DownloadFile returning the bytes it fetched.
func (s *Store) DownloadCounted(ctx context.Context, key, dst string) (int64, error) {
	return s.download(ctx, key, dst)
}
