// Package registry builds the scheme set: the one place c2flow names its
// proof schemes. Only composition roots (cmd/, stack, sim, bench) import
// it; the pipeline (activities, batch, workflows, storage, prover, the
// gateway) sees a scheme.Set and nothing concrete.
//
// A new proof kind is one package behind scheme.Scheme and one line in
// Schemes.
package registry

import (
	"context"
	"log/slog"

	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
)

// Remote is the shared store behind every scheme's local key directory
// (storage.Store implements it).
type Remote interface {
	params.Remote
	snark.Remote
}

// Options say where the schemes find their keys and how they prove. The
// zero value gives schemes that decode, identify and verify inputs natively
// but load no key (what a submitter needs).
type Options struct {
	// ParamsDir is the test scheme's local key directory ("": none, or
	// params.DefaultDir() where Remote is set).
	ParamsDir string
	// FilecoinParams is Filecoin's parameter directory ("": Filecoin's
	// default, snark.DefaultDir()).
	FilecoinParams string
	// FilecoinShapes caches Filecoin's recorded circuit shapes ("": the
	// default under c2flow's cache).
	FilecoinShapes string
	// FilecoinPair, when set, names the .params/.vk pair of every Filecoin
	// seal proof instead of a search of FilecoinParams (c2flow prove --vk).
	FilecoinPair *KeyPair
	// Remote supplies the keys the local directories lack, and receives
	// the ones made or found only locally (nil: local only).
	Remote Remote `json:"-"`
	// DevSetup makes a development setup of a test-scheme profile whose
	// keys are missing (one-process commands only: never real sectors).
	DevSetup bool
	// EarlyG2 starts each partition's B-in-G2 MSM with its device phase.
	EarlyG2 bool
	Log     *slog.Logger `json:"-"`
}

// KeyPair names a proving key file and its verifying key file.
type KeyPair struct {
	Params, VK string
}

// FilecoinParamsDir is Filecoin's parameter directory where none is named:
// $FIL_PROOFS_PARAMETER_CACHE, else Filecoin's default.
func FilecoinParamsDir() string { return snark.DefaultDir() }

// FilecoinParamsPrefix is the key prefix of Filecoin's parameter files in
// the shared store.
const FilecoinParamsPrefix = snark.RemotePrefix

// DevSetupProofs are the proofs a development stack sets up keys for
// (c2flow dev --dev-setup): each Filecoin kind's smallest, whose
// single-party setup takes seconds.
func DevSetupProofs() []string {
	return []string{"StackedDrg2KiBV1_1", snark.UpdatePrefix + "StackedDrg2KiBV1", "StackedDrgWindow2KiBV1_2", "StackedDrgWinning2KiBV1"}
}

// FilecoinDevSetup writes into dir a DEVELOPMENT SETUP of a Filecoin
// proof's circuit (single-party: never for real sectors) in Filecoin's
// format, from the machine's setup cache where it has one, and returns
// the pair's files.
func FilecoinDevSetup(ctx context.Context, proof, dir string) (KeyPair, error) {
	f, err := snark.DevSetup(ctx, proof, dir, snark.DefaultSetupCache(), nil)
	return KeyPair{Params: f.Params, VK: f.VK}, err
}

// Schemes returns every scheme c2flow runs, over o.
func Schemes(o Options) scheme.Set {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var pair *snark.Files
	if o.FilecoinPair != nil {
		pair = &snark.Files{Params: o.FilecoinPair.Params, VK: o.FilecoinPair.VK}
	}
	fc := snark.New(snark.Params{Dir: o.FilecoinParams, Remote: remote(o.Remote), ShapeDir: o.FilecoinShapes, Pair: pair, EarlyG2: o.EarlyG2}, o.Log)
	return scheme.Set{
		testscheme.New(testKeys(o), testscheme.WithLogger(o.Log), testscheme.WithEarlyG2(o.EarlyG2), testscheme.WithDevSetup(o.DevSetup)),
		fc,
		fc.Update(),
		fc.PoSt(),
	}
}

// testKeys is the test scheme's key store: the local directory in front of
// the remote, the directory alone, or none (decode only).
func testKeys(o Options) params.Store {
	switch {
	case o.Remote != nil:
		dir := o.ParamsDir
		if dir == "" {
			dir = params.DefaultDir()
		}
		return params.Cache{Local: params.DirStore{Root: dir}, Remote: o.Remote}
	case o.ParamsDir != "":
		return params.DirStore{Root: o.ParamsDir}
	}
	return nil
}

// remote keeps a nil Remote a nil interface for snark.Params.
func remote(r Remote) snark.Remote {
	if r == nil {
		return nil
	}
	return r
}

// Plan is what a host needs for one Filecoin proof (snark.Plan).
type Plan = snark.Plan

// PlanOf plans a Filecoin proof from its counted circuit (c2flow plan).
func PlanOf(proof string) (Plan, error) { return snark.PlanOf(proof) }

// Mapped is what a process holds of one Filecoin circuit (snark.Mapped).
type Mapped = snark.Mapped

// MapFilecoin loads a Filecoin proof's circuit as a worker of o does on
// first use: its system mapped and, with withKey, its proving key
// (c2flow bench load).
func MapFilecoin(ctx context.Context, o Options, proof string, withKey bool) (Mapped, error) {
	fc := snark.New(snark.Params{Dir: o.FilecoinParams, ShapeDir: o.FilecoinShapes}, o.Log)
	return fc.Map(ctx, proof, withKey)
}
