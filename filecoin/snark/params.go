package snark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
	"github.com/c2flow/c2flow/scheme"
)

const (
	// PairPrefix is the name of Filecoin's seal parameter files up to the
	// tree shape: PairPrefix + "<shape>-sha256_hasher-<id>.params" and
	// ".vk" (rust-fil-proofs parameters.json).
	PairPrefix = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-"
	// ParametersJSON names the file of the parameter files' digests and
	// sector sizes, as rust-fil-proofs and lotus ship it
	// (build/proof-params/parameters.json).
	ParametersJSON = "parameters.json"
	// DevMarker names the file that marks a parameter directory as a
	// development setup (see DevSetup).
	DevMarker = "DEVELOPMENT-SETUP"
	// RemotePrefix is the key prefix of the parameter files in a Remote:
	// RemotePrefix + <file name>.
	RemotePrefix = "params/filecoin/"
	// maxParametersJSON bounds parameters.json (Filecoin's is ~20 KB).
	maxParametersJSON = 4 << 20
)

// ErrBadParams is wrapped when a parameter file is not what
// parameters.json says it is (its digest differs), or two files that
// must be a pair are not.
var ErrBadParams = errors.New("bad Filecoin parameter file")

// DefaultDir is Filecoin's parameter directory as filecoin-proofs finds
// it: $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters
// (rust-fil-proofs storage-proofs-core/src/parameter_cache.rs).
func DefaultDir() string {
	if d := os.Getenv("FIL_PROOFS_PARAMETER_CACHE"); d != "" {
		return d
	}
	return "/var/tmp/filecoin-proof-parameters"
}

// DefaultShapeDir is where recorded circuit shapes are cached by default:
// filecoin-shapes under c2flow's cache ($C2FLOW_PARAMS, else <user cache
// dir>/c2flow/params, where the test scheme keeps its keys).
func DefaultShapeDir() string {
	root := os.Getenv("C2FLOW_PARAMS")
	if root == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			d = os.TempDir()
		}
		root = filepath.Join(d, "c2flow", "params")
	}
	return filepath.Join(root, "filecoin-shapes")
}

// Remote holds parameter files that the local directory lacks, under
// RemotePrefix + <file name> (parameters.json and DevMarker included).
type Remote interface {
	// Open returns the object under key, or an error wrapping
	// fs.ErrNotExist when there is none.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Files is a .params/.vk pair on disk.
type Files struct {
	Params, VK string
}

// Params says where a Scheme finds Filecoin's parameters.
type Params struct {
	// Dir holds the .params and .vk files and parameters.json ("":
	// DefaultDir()).
	Dir string
	// Remote, when set, supplies the files Dir lacks; they are downloaded
	// into Dir (atomically: a file there is whole or absent).
	Remote Remote
	// ShapeDir caches the recorded circuit shapes ("": DefaultShapeDir()).
	ShapeDir string
	// Pair, when set, names the .params/.vk pair of every proof instead of
	// a search of Dir, and is not checked against parameters.json: the
	// caller vouches for it (c2flow prove --vk/--pk-params).
	Pair *Files
	// EarlyG2 starts each partition's B-in-G2 MSM when its device phase
	// starts (prover.Prover.EarlyG2).
	EarlyG2 bool
}

func (p Params) dir() string {
	if p.Dir == "" {
		return DefaultDir()
	}
	return p.Dir
}

func (p Params) shapeDir() string {
	if p.ShapeDir == "" {
		return DefaultShapeDir()
	}
	return p.ShapeDir
}

// located is a proof's parameter pair as found.
type located struct {
	Files
	// want are parameters.json's digests of the .params and .vk; empty
	// when the pair is not listed (given, or a development setup's).
	wantParams, wantVK string
	dev                bool
}

// fileSums are a file's digests, computed in one read.
type fileSums struct {
	size   int64
	mtime  time.Time
	sha256 string // hex SHA-256
	filDig string // parameters.json's digest (groth.FileDigest)
}

// sumCache computes each file's digests once per process (per Scheme),
// again only when its size or modification time changes.
type sumCache struct {
	mu sync.Mutex
	m  map[string]fileSums
}

func (c *sumCache) of(ctx context.Context, path string) (fileSums, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileSums{}, err
	}
	c.mu.Lock()
	s, ok := c.m[path]
	c.mu.Unlock()
	if ok && s.size == st.Size() && s.mtime.Equal(st.ModTime()) {
		return s, nil
	}
	s, err = sumFile(ctx, path)
	if err != nil {
		return fileSums{}, err
	}
	s.size, s.mtime = st.Size(), st.ModTime()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]fileSums{}
	}
	c.m[path] = s
	c.mu.Unlock()
	return s, nil
}

// sumFile reads path once for its SHA-256 and its parameters.json digest.
func sumFile(ctx context.Context, path string) (fileSums, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileSums{}, err
	}
	defer f.Close()
	h := sha256.New()
	d, err := groth.FileDigest(io.TeeReader(ctxReader{ctx, f}, h))
	if err != nil {
		return fileSums{}, fmt.Errorf("digest of %s: %w", path, err)
	}
	return fileSums{sha256: hex.EncodeToString(h.Sum(nil)), filDig: d}, nil
}

// ctxReader ends a long read when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// checkSums returns the digests of the pair's files, checked against
// parameters.json's where it lists them.
func (s *keyring) checkSums(ctx context.Context, loc *located) (pSums, vSums fileSums, err error) {
	for _, f := range []struct {
		path, want string
		dst        *fileSums
	}{{loc.VK, loc.wantVK, &vSums}, {loc.Params, loc.wantParams, &pSums}} {
		sums, err := s.sums.of(ctx, f.path)
		if err != nil {
			return pSums, vSums, err
		}
		if f.want != "" && sums.filDig != f.want {
			return pSums, vSums, fmt.Errorf("%s: digest %s, %s says %s: %w (delete the file to fetch it again)",
				f.path, sums.filDig, ParametersJSON, f.want, ErrBadParams)
		}
		*f.dst = sums
	}
	return pSums, vSums, nil
}

// locate finds sp's parameter pair: the one parameters.json lists under
// sp's name prefix and sector size (downloaded from the Remote where Dir
// lacks it), else, in a development setup, the one in Dir whose .vk has
// sp's IC points. With vkOnly only the .vk need be present
// (and is the only file downloaded) where the pair is given or listed. A
// missing pair wraps scheme.ErrNoKeys.
func (s *keyring) locate(ctx context.Context, sp *spec, vkOnly bool) (*located, error) {
	need := func(f Files) []string {
		if vkOnly {
			return []string{f.VK}
		}
		return []string{f.VK, f.Params}
	}
	if p := s.params.Pair; p != nil {
		for _, f := range need(*p) {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("%s parameters: %w: %w", sp.name, err, scheme.ErrNoKeys)
			}
		}
		return &located{Files: *p}, nil
	}
	dir := s.params.dir()
	m, mdesc, fetched, err := s.parametersJSON(ctx, dir)
	if err != nil {
		return nil, err
	}
	listed := listedPairs(m, sp)
	if len(listed) == 0 && !fetched && s.params.Remote != nil {
		// Published since this directory's parameters.json was fetched
		// (a development setup of another proof, made later): the
		// remote's listing, merged in.
		if m, mdesc, err = s.mergeRemoteListing(ctx, dir); err != nil {
			return nil, err
		}
		listed = listedPairs(m, sp)
	}
	_, err = os.Stat(filepath.Join(dir, DevMarker))
	dev := err == nil
	if len(listed) > 1 {
		listed = narrowListed(dir, listed, sp)
	}
	switch len(listed) {
	case 1:
		base := listed[0]
		loc := &located{Files: Files{Params: filepath.Join(dir, base+".params"), VK: filepath.Join(dir, base+".vk")},
			wantParams: m[base+".params"].Digest, wantVK: m[base+".vk"].Digest, dev: dev}
		log := s.log
		if dev {
			log = log.With("parameters", "DEVELOPMENT SETUP")
		}
		files := []struct{ path, want string }{{loc.VK, loc.wantVK}, {loc.Params, loc.wantParams}}
		if vkOnly {
			files = files[:1]
		}
		for _, f := range files {
			if err := s.ensure(ctx, f.path, f.want, log); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", sp.name, err)
			}
		}
		return loc, nil
	case 0:
	default:
		return nil, fmt.Errorf("%s parameters: %s lists %d pairs named %s<id> for sector size %d (%s): one is needed: %w",
			sp.name, mdesc, len(listed), sp.prefix, sp.sectorSize, strings.Join(listed, ", "), ErrBadParams)
	}
	pair, err := findParamsPair(dir, sp)
	if err != nil {
		remote := ""
		if s.params.Remote != nil {
			remote = "; the remote storage has none either"
		}
		return nil, fmt.Errorf("%s parameters: %w (no entry for sector size %d in %s%s): %w", sp.name, err, sp.sectorSize, mdesc, remote, scheme.ErrNoKeys)
	}
	if !dev {
		return nil, fmt.Errorf("%s parameters: %s and %s fit, but they have no entry in %s, so their digests cannot be checked, and %s is not a development setup (no %s file): put Filecoin's %s (lotus build/proof-params/%s) in %s: %w",
			sp.name, filepath.Base(pair.params), filepath.Base(pair.vk), mdesc, dir, DevMarker, ParametersJSON, ParametersJSON, dir, scheme.ErrNoKeys)
	}
	return &located{Files: Files{Params: pair.params, VK: pair.vk}, dev: true}, nil
}

// narrowListed picks sp's pair of several listed under its prefix and
// size: PoSt's window and winning circuits of a size share the prefix
// (Filecoin names both by their cache identifier). The published pair is
// the one named sp.published; a development setup's is the one whose
// local .vk has sp's IC points.
func narrowListed(dir string, listed []string, sp *spec) []string {
	var out []string
	for _, base := range listed {
		if sp.published != "" && base == sp.published {
			return []string{base}
		}
		if _, err := groth.ReadVerifyingKeyFileFor(filepath.Join(dir, base+".vk"), sp.numInputs); err == nil {
			out = append(out, base)
		}
	}
	if len(out) == 0 {
		return listed
	}
	return out
}

// listedPairs are the pairs m lists for sp (its name prefix and sector
// size), by base name, sorted.
func listedPairs(m map[string]groth.ParameterEntry, sp *spec) []string {
	var listed []string
	for name, e := range m {
		base, ok := strings.CutSuffix(name, ".vk")
		if !ok || !strings.HasPrefix(name, sp.prefix) || e.SectorSize != sp.sectorSize {
			continue
		}
		if pe, ok := m[base+".params"]; ok && pe.SectorSize == sp.sectorSize {
			listed = append(listed, base)
		}
	}
	sort.Strings(listed)
	return listed
}

// parametersJSON reads dir's parameters.json, downloading it (and the
// development marker, if the remote has one) when dir lacks it and a
// Remote is set (fetched then says so). A missing file is an empty map;
// desc says where it was looked for.
func (s *keyring) parametersJSON(ctx context.Context, dir string) (m map[string]groth.ParameterEntry, desc string, fetched bool, err error) {
	path := filepath.Join(dir, ParametersJSON)
	desc = path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && s.params.Remote != nil {
		desc += " (and " + RemotePrefix + ParametersJSON + " in the remote storage)"
		fetched = true
		if err := s.fetch(ctx, path, "", maxParametersJSON); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, desc, fetched, err
		}
		if err := s.fetch(ctx, filepath.Join(dir, DevMarker), "", 1<<16); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, desc, fetched, err
		}
	}
	m, err = readListing(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, desc + " (absent)", fetched, nil
	}
	return m, desc, fetched, err
}

// readListing reads and parses a parameters.json, bounded.
func readListing(path string) (map[string]groth.ParameterEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxParametersJSON+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxParametersJSON {
		return nil, fmt.Errorf("%s: over %d bytes: %w", path, maxParametersJSON, ErrBadParams)
	}
	m, err := groth.ParseParametersJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, err, ErrBadParams)
	}
	return m, nil
}

// mergeRemoteListing adds to dir's parameters.json the entries the
// remote's lists and it lacks (an entry dir has is never replaced: its
// files were checked against it), and fetches the development marker the
// remote has and dir lacks.
func (s *keyring) mergeRemoteListing(ctx context.Context, dir string) (map[string]groth.ParameterEntry, string, error) {
	path := filepath.Join(dir, ParametersJSON)
	desc := path + " (and " + RemotePrefix + ParametersJSON + " in the remote storage)"
	unlock, err := flock.Lock(ctx, filepath.Join(dir, ".lock-listing"))
	if err != nil {
		return nil, desc, err
	}
	defer unlock()
	tmp := filepath.Join(dir, ".remote-"+ParametersJSON)
	defer os.Remove(tmp)
	if err := s.fetch(ctx, tmp, "", maxParametersJSON); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			m, err := readListing(path)
			return m, desc, err
		}
		return nil, desc, err
	}
	remote, err := readListing(tmp)
	if err != nil {
		return nil, desc, err
	}
	m, err := readListing(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, desc, err
	}
	if m == nil {
		m = map[string]groth.ParameterEntry{}
	}
	added := 0
	for name, e := range remote {
		if _, ok := m[name]; !ok {
			m[name] = e
			added++
		}
	}
	if added > 0 {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return nil, desc, err
		}
		if err := atomicfile.WriteBytes(path, append(b, '\n')); err != nil {
			return nil, desc, err
		}
		s.log.Info("parameters.json: entries published since it was fetched added", "file", path, "added", added)
	}
	if _, err := os.Stat(filepath.Join(dir, DevMarker)); errors.Is(err, fs.ErrNotExist) {
		if err := s.fetch(ctx, filepath.Join(dir, DevMarker), "", 1<<16); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, desc, err
		}
	}
	return m, desc, nil
}

// ensure makes path (listed in parameters.json with digest want) present:
// downloaded from the Remote when absent. A file that neither has wraps
// scheme.ErrNoKeys.
func (s *keyring) ensure(ctx context.Context, path, want string, log *slog.Logger) error {
	_, err := os.Stat(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if s.params.Remote == nil {
		return fmt.Errorf("%s, listed in %s, is absent (and no remote storage is configured): %w", path, ParametersJSON, scheme.ErrNoKeys)
	}
	t0 := time.Now()
	err = s.fetch(ctx, path, want, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s, listed in %s, is absent, and the remote storage has no %s: %w",
			path, ParametersJSON, RemotePrefix+filepath.Base(path), scheme.ErrNoKeys)
	}
	if err != nil {
		return err
	}
	st, _ := os.Stat(path)
	log.Info("downloaded Filecoin parameter file", "file", path, "bytes", st.Size(), "s", time.Since(t0).Seconds())
	return nil
}

// fetch downloads RemotePrefix + base(path) into path through a temporary
// file renamed into place, checked against the parameters.json digest
// want when given; more than max bytes (max > 0) is an error. A key the
// remote lacks is an error wrapping fs.ErrNotExist.
func (s *keyring) fetch(ctx context.Context, path, want string, max int64) error {
	key := RemotePrefix + filepath.Base(path)
	rc, err := s.params.Remote.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", key, err)
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("downloading %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".download-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("downloading %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	var r io.Reader = ctxReader{ctx, rc}
	if max > 0 {
		r = io.LimitReader(r, max+1)
	}
	n, err := io.CopyBuffer(tmp, r, make([]byte, 4<<20))
	if err == nil && max > 0 && n > max {
		err = fmt.Errorf("over %d bytes: %w", max, ErrBadParams)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("downloading %s to %s: %w", key, path, err)
	}
	if want != "" {
		sums, err := sumFile(ctx, tmp.Name())
		if err != nil {
			return fmt.Errorf("downloading %s: %w", key, err)
		}
		if sums.filDig != want {
			return fmt.Errorf("downloaded %s: digest %s, %s says %s; not kept: %w", key, sums.filDig, ParametersJSON, want, ErrBadParams)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("downloading %s: %w", key, err)
	}
	return nil
}

// paramsPair is a circuit's .params and .vk found by a search of a
// directory.
type paramsPair struct {
	params, vk string
	key        *groth.VerifyingKey
}

// findParamsPair picks in dir the single .params/.vk pair named with sp's
// prefix whose verifying key has sp's IC points (the circuit's inputs,
// ONE included) and that a parameters.json in dir does not list for
// another sector size: 2KiB, 8MiB and 512MiB share the 8-0-0 shape and
// the count. The error lists what was found.
func findParamsPair(dir string, sp *spec) (*paramsPair, error) {
	want, numInputs := sp.prefix, sp.numInputs
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("finding %s parameters: %w", sp.name, err)
	}
	var seen []string
	var fits []*paramsPair
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".vk") {
			continue
		}
		if !strings.HasPrefix(name, want) {
			switch {
			case strings.HasPrefix(name, PairPrefix) && strings.HasPrefix(want, PairPrefix):
				seen = append(seen, name+" (another tree shape)")
			case strings.HasPrefix(name, update.ParamsVersion+"-"):
				seen = append(seen, name+" (another circuit)")
			}
			continue
		}
		p := &paramsPair{vk: filepath.Join(dir, name), params: filepath.Join(dir, strings.TrimSuffix(name, ".vk")+".params")}
		if _, err := os.Stat(p.params); err != nil {
			seen = append(seen, name+" (no .params beside it)")
			continue
		}
		// The IC count is compared on the header, before the points are read.
		key, err := groth.ReadVerifyingKeyFileFor(p.vk, numInputs)
		var ic *groth.ICCountError
		if errors.As(err, &ic) {
			seen = append(seen, fmt.Sprintf("%s (%d IC points, want %d)", name, ic.Got, numInputs))
			continue
		}
		if err != nil {
			seen = append(seen, fmt.Sprintf("%s (unreadable: %v)", name, err))
			continue
		}
		p.key = key
		fits = append(fits, p)
	}
	// Always: 2KiB, 8MiB and 512MiB share a shape, and a pair listed for
	// another size is never this proof's, even if it is the only one.
	fits, seen = bySectorSize(dir, fits, sp.sectorSize, seen)
	for _, p := range fits {
		seen = append(seen, filepath.Base(p.vk)+" (fits)")
	}
	if len(fits) == 1 {
		return fits[0], nil
	}
	found := "nothing of Filecoin's parameters"
	if len(seen) > 0 {
		sort.Strings(seen)
		found = strings.Join(seen, "; ")
	}
	what := "no"
	if len(fits) > 1 {
		what = fmt.Sprintf("%d", len(fits))
	}
	return nil, fmt.Errorf("%s: %s .params/.vk pair for %s (%s<id>.params and .vk, %d IC points) where one is needed; found: %s",
		dir, what, sp.name, want, numInputs, found)
}

// bySectorSize drops the pairs that parameters.json in dir lists for
// another sector size (noted in seen); of several left, it keeps those it
// lists for size. Without a parameters.json it keeps them all.
func bySectorSize(dir string, pairs []*paramsPair, size uint64, seen []string) ([]*paramsPair, []string) {
	b, err := os.ReadFile(filepath.Join(dir, ParametersJSON))
	if err != nil {
		return pairs, seen
	}
	m, err := groth.ParseParametersJSON(b)
	if err != nil {
		return pairs, seen
	}
	var out, listed []*paramsPair
	for _, p := range pairs {
		e, ok := m[filepath.Base(p.vk)]
		switch {
		case ok && e.SectorSize != size:
			seen = append(seen, fmt.Sprintf("%s (listed for sector size %d)", filepath.Base(p.vk), e.SectorSize))
		case ok:
			listed = append(listed, p)
			out = append(out, p)
		default:
			out = append(out, p)
		}
	}
	if len(out) > 1 {
		out = listed
	}
	return out, seen
}
