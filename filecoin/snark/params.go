package snark

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/c2flow/c2flow/filecoin/paramfiles"
)

// The parameter store is filecoin/paramfiles'; these forward the names
// that packages outside filecoin/ still take from here.
const (
	// PairPrefix forwards paramfiles.PairPrefix.
	PairPrefix = paramfiles.PairPrefix
	// ParametersJSON forwards paramfiles.ParametersJSON.
	ParametersJSON = paramfiles.ParametersJSON
	// DevMarker forwards paramfiles.DevMarker.
	DevMarker = paramfiles.DevMarker
	// RemotePrefix forwards paramfiles.RemotePrefix.
	RemotePrefix = paramfiles.RemotePrefix
)

// Files forwards paramfiles.Files.
type Files = paramfiles.Files

// Remote forwards paramfiles.Remote.
type Remote = paramfiles.Remote

// DefaultDir forwards paramfiles.DefaultDir.
func DefaultDir() string { return paramfiles.DefaultDir() }

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

// store is the parameter store p describes.
func (p Params) store(log *slog.Logger) *paramfiles.Store {
	return &paramfiles.Store{Dir: p.dir(), Remote: p.Remote, Pair: p.Pair, Log: log, Stamps: stampsOf(p.shapeDir())}
}

// locate finds sp's parameter pair in the store (paramfiles.Store.Locate);
// a development setup's is named by the digest of sp's recorded circuit.
func (r *keyring) locate(ctx context.Context, sp *spec, vkOnly bool) (*paramfiles.Located, error) {
	return r.store.Locate(ctx, paramfiles.Circuit{
		Name: sp.name, SectorSize: sp.sectorSize, NumInputs: sp.numInputs, Prefix: sp.prefix, Published: sp.published,
		Digest: func() (string, error) {
			c, err := r.circuitOf(ctx, sp)
			if err != nil {
				return "", err
			}
			return c.digest, nil
		},
	}, vkOnly)
}
