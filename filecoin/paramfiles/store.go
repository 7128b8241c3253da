package paramfiles

import (
	"context"
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
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
	"github.com/c2flow/c2flow/internal/mapped"
	"github.com/c2flow/c2flow/scheme"
)

// Store finds and checks Filecoin's parameter files in a directory,
// downloading what it lacks from a Remote. It is safe for concurrent use
// and computes each file's digests once (again when the file changes).
type Store struct {
	// Dir holds the .params and .vk files and parameters.json ("":
	// DefaultDir()).
	Dir string
	// Remote, when set, supplies the files Dir lacks; they are downloaded
	// into Dir (atomically: a file there is whole or absent).
	Remote Remote
	// Pair, when set, names the pair of every circuit instead of a search
	// of Dir, and is not checked against parameters.json: the caller
	// vouches for it.
	Pair *Files
	// Log gets the downloads (nil: none).
	Log *slog.Logger
	// Stamps keeps the files' digests across processes, each file hashed
	// again only when it changes (Dir "": hashed once per Store).
	Stamps mapped.Stamps

	sums sumCache
}

// dir is the store's directory.
func (s *Store) dir() string {
	if s.Dir == "" {
		return DefaultDir()
	}
	return s.Dir
}

func (s *Store) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Locate finds c's parameter pair: the one parameters.json lists under
// c's name prefix and sector size (downloaded from the Remote where Dir
// lacks it), else, in a development setup, the one in Dir whose .vk has
// c's IC points. With vkOnly only the .vk need be present
// (and is the only file downloaded) where the pair is given or listed. A
// missing pair wraps scheme.ErrNoKeys.
func (s *Store) Locate(ctx context.Context, c Circuit, vkOnly bool) (*Located, error) {
	need := func(f Files) []string {
		if vkOnly {
			return []string{f.VK}
		}
		return []string{f.VK, f.Params}
	}
	if p := s.Pair; p != nil {
		for _, f := range need(*p) {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("%s parameters: %w: %w", c.Name, err, scheme.ErrNoKeys)
			}
		}
		return &Located{Files: *p}, nil
	}
	dir := s.dir()
	m, mdesc, fetched, err := s.parametersJSON(ctx, dir)
	if err != nil {
		return nil, err
	}
	listed := listedPairs(m, c)
	if len(listed) == 0 && !fetched && s.Remote != nil {
		// Published since this directory's parameters.json was fetched
		// (a development setup of another proof, made later): the
		// remote's listing, merged in.
		if m, mdesc, err = s.mergeRemoteListing(ctx, dir); err != nil {
			return nil, err
		}
		listed = listedPairs(m, c)
	}
	_, err = os.Stat(filepath.Join(dir, DevMarker))
	dev := err == nil
	if len(listed) > 1 {
		listed = s.narrowListed(listed, c)
	}
	switch len(listed) {
	case 1:
		base := listed[0]
		loc := &Located{Files: Files{Params: filepath.Join(dir, base+".params"), VK: filepath.Join(dir, base+".vk")},
			WantParams: m[base+".params"].Digest, WantVK: m[base+".vk"].Digest, Dev: dev}
		log := s.log()
		if dev {
			log = log.With("parameters", "DEVELOPMENT SETUP")
		}
		files := []struct{ path, want string }{{loc.VK, loc.WantVK}, {loc.Params, loc.WantParams}}
		if vkOnly {
			files = files[:1]
		}
		for _, f := range files {
			if err := s.ensure(ctx, f.path, f.want, log); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", c.Name, err)
			}
		}
		return loc, nil
	case 0:
	default:
		return nil, fmt.Errorf("%s parameters: %s lists %d pairs named %s<id> for sector size %d (%s): one is needed: %w",
			c.Name, mdesc, len(listed), c.Prefix, c.SectorSize, strings.Join(listed, ", "), ErrBadParams)
	}
	pair, err := findParamsPair(dir, c)
	if err != nil {
		remote := ""
		if s.Remote != nil {
			remote = "; the remote storage has none either"
		}
		return nil, fmt.Errorf("%s parameters: %w (no entry for sector size %d in %s%s): %w", c.Name, err, c.SectorSize, mdesc, remote, scheme.ErrNoKeys)
	}
	if !dev {
		return nil, fmt.Errorf("%s parameters: %s and %s fit, but they have no entry in %s, so their digests cannot be checked, and %s is not a development setup (no %s file): put Filecoin's %s (lotus build/proof-params/%s) in %s: %w",
			c.Name, filepath.Base(pair.params), filepath.Base(pair.vk), mdesc, dir, DevMarker, ParametersJSON, ParametersJSON, dir, scheme.ErrNoKeys)
	}
	return &Located{Files: Files{Params: pair.params, VK: pair.vk}, Dev: true}, nil
}

// narrowListed picks c's pair of several listed under its prefix and
// size: PoSt's window and winning circuits of a size share the prefix
// (Filecoin names both by their cache identifier). The published pair is
// the one named c.Published; a development setup's is named by its
// circuit's digest (DevBase), asked for only when no published name
// decides.
func (s *Store) narrowListed(listed []string, c Circuit) []string {
	for _, base := range listed {
		if c.Published != "" && base == c.Published {
			return []string{base}
		}
	}
	if c.Digest == nil {
		return listed
	}
	digest, err := c.Digest()
	if err != nil {
		return listed
	}
	for _, base := range listed {
		if base == DevBase(c.Prefix, digest) {
			return []string{base}
		}
	}
	return listed
}

// listedPairs are the pairs m lists for c (its name prefix and sector
// size), by base name, sorted.
func listedPairs(m Listing, c Circuit) []string {
	var listed []string
	for name, e := range m {
		base, ok := strings.CutSuffix(name, ".vk")
		if !ok || !strings.HasPrefix(name, c.Prefix) || e.SectorSize != c.SectorSize {
			continue
		}
		if pe, ok := m[base+".params"]; ok && pe.SectorSize == c.SectorSize {
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
func (s *Store) parametersJSON(ctx context.Context, dir string) (m Listing, desc string, fetched bool, err error) {
	path := filepath.Join(dir, ParametersJSON)
	desc = path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && s.Remote != nil {
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
func readListing(path string) (Listing, error) {
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
func (s *Store) mergeRemoteListing(ctx context.Context, dir string) (Listing, string, error) {
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
		m = Listing{}
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
		s.log().Info("parameters.json: entries published since it was fetched added", "file", path, "added", added)
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
func (s *Store) ensure(ctx context.Context, path, want string, log *slog.Logger) error {
	_, err := os.Stat(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if s.Remote == nil {
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
func (s *Store) fetch(ctx context.Context, path, want string, max int64) error {
	key := RemotePrefix + filepath.Base(path)
	rc, err := s.Remote.Open(ctx, key)
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
		sums, err := SumFile(ctx, tmp.Name())
		if err != nil {
			return fmt.Errorf("downloading %s: %w", key, err)
		}
		if sums.FilDigest != want {
			return fmt.Errorf("downloaded %s: digest %s, %s says %s; not kept: %w", key, sums.FilDigest, ParametersJSON, want, ErrBadParams)
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

// findParamsPair picks in dir the single .params/.vk pair named with c's
// prefix whose verifying key has c's IC points (the circuit's inputs,
// ONE included) and that a parameters.json in dir does not list for
// another sector size: 2KiB, 8MiB and 512MiB share the 8-0-0 shape and
// the count. The error lists what was found.
func findParamsPair(dir string, c Circuit) (*paramsPair, error) {
	want, numInputs := c.Prefix, c.NumInputs
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("finding %s parameters: %w", c.Name, err)
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
	fits, seen = bySectorSize(dir, fits, c.SectorSize, seen)
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
		dir, what, c.Name, want, numInputs, found)
}

// bySectorSize drops the pairs that parameters.json in dir lists for
// another sector size (noted in seen); of several left, it keeps those it
// lists for size. Without a parameters.json it keeps them all.
func bySectorSize(dir string, pairs []*paramsPair, size uint64, seen []string) ([]*paramsPair, []string) {
	m, err := readListing(filepath.Join(dir, ParametersJSON))
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

// devMarkerText is the development marker's content.
const devMarkerText = `DEVELOPMENT SETUP

The .params and .vk files in this directory come from a single-party
setup (c2flow filecoin/groth Generate, bellperson's
generate_random_parameters), whose toxic waste the machine that ran it
knew. Proofs made with them verify only under these .vk files and are
worthless on chain. Never use them for real sectors.
`

// DevPair is the pair of base name base in dir.
func DevPair(dir, base string) Files {
	return Files{Params: filepath.Join(dir, base+".params"), VK: filepath.Join(dir, base+".vk")}
}

// DevInstalled reports whether dir holds files, listed in its
// parameters.json with the sector size, and the development marker.
func DevInstalled(dir string, files Files, size uint64) (bool, error) {
	entries, err := readListing(filepath.Join(dir, ParametersJSON))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, p := range []string{files.Params, files.VK, filepath.Join(dir, DevMarker)} {
		if _, err := os.Stat(p); err != nil {
			return false, nil
		}
	}
	for _, p := range []string{files.Params, files.VK} {
		if e, ok := entries[filepath.Base(p)]; !ok || e.SectorSize != size {
			return false, nil
		}
	}
	return true, nil
}

// InstallDev puts a development setup's pair from (a setup cache's) into
// dir as to, hard-linked or copied across file systems, lists their
// digests with the sector size in dir's parameters.json and writes the
// development marker, so that a Store over dir finds them (and says
// DEVELOPMENT SETUP). The caller holds dir's lock.
func InstallDev(ctx context.Context, dir string, from, to Files, size uint64) error {
	path := filepath.Join(dir, ParametersJSON)
	entries, err := readListing(path)
	if errors.Is(err, fs.ErrNotExist) {
		entries, err = Listing{}, nil
	}
	if err != nil {
		return err
	}
	for _, f := range []struct{ from, to string }{{from.Params, to.Params}, {from.VK, to.VK}} {
		if err := linkOrCopy(f.from, f.to); err != nil {
			return fmt.Errorf("install %s: %w", f.to, err)
		}
		sums, err := SumFile(ctx, f.to)
		if err != nil {
			return err
		}
		entries[filepath.Base(f.to)] = groth.ParameterEntry{Digest: sums.FilDigest, SectorSize: size}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("list %s in %s: %w", to.VK, path, err)
	}
	if err := atomicfile.WriteBytes(path, append(b, '\n')); err != nil {
		return fmt.Errorf("list %s in %s: %w", to.VK, path, err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, DevMarker), []byte(devMarkerText)); err != nil {
		return fmt.Errorf("mark %s a development setup: %w", dir, err)
	}
	return nil
}

// linkOrCopy puts from at to: a hard link, or a copy (through a temporary
// file) where the two are on different file systems.
func linkOrCopy(from, to string) error {
	os.Remove(to)
	if err := os.Link(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return atomicfile.Write(to, func(w io.Writer) error { _, err := io.Copy(w, src); return err })
}

// PublishDev uploads a development setup's pair in the store's directory
// to its Remote under RemotePrefix, where hosts without the files find
// them, with the development marker and parameters.json (uploaded each
// time: it lists every pair of the directory, this one too). A store
// without a Remote publishes nothing.
func (s *Store) PublishDev(ctx context.Context, files Files) error {
	if s.Remote == nil {
		return nil
	}
	pub, ok := s.Remote.(Publisher)
	if !ok {
		return fmt.Errorf("publish %s: the parameters' storage (%T) takes no uploads", files.VK, s.Remote)
	}
	dir := s.dir()
	for _, path := range []string{files.Params, files.VK, filepath.Join(dir, DevMarker), filepath.Join(dir, ParametersJSON)} {
		key := RemotePrefix + filepath.Base(path)
		if _, err := pub.Head(ctx, key); err == nil && filepath.Base(path) != ParametersJSON {
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("publish %s: %w", key, err)
		}
		if err := pub.UploadFile(ctx, key, path); err != nil {
			return fmt.Errorf("publish %s: %w", key, err)
		}
	}
	return nil
}
