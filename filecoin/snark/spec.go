package snark

import (
	"fmt"
	"strings"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/prover/packed"
)

// spec is what the parameter machinery (locate, load, the development
// setup) needs of one Groth16 circuit of Filecoin's: a seal proof's
// StackedCircuit or an update proof's EmptySectorUpdateCircuit.
type spec struct {
	name string // the proof's name, in messages
	// key names the circuit: proofs of one circuit share one load.
	key        string
	sectorSize uint64
	numInputs  int // ONE included
	// prefix is the parameter files' name up to their identifier:
	// parameters.json lists the published pair as prefix + <id>, and a
	// development setup is named prefix + "dev" + <circuit digest>.
	prefix string
	// published is the published pair's base name where several circuits
	// share prefix and sector size (PoSt's window and winning), else "".
	published string
	// shapeName names the recorded circuit in the shape cache.
	shapeName string
	// synth synthesizes the blank circuit (no values) into cs.
	synth func(cs r1cs.System) error
	// system, if set, makes the prover's constraint system otherwise than
	// from the recorded shape (a PoSt partition's: one sector's, repeated).
	system func() (*packed.Repeated, error)
	// known are the counts the budget reserves by (ok false: unknown).
	known   Counts
	knownOK bool
}

// sealSpec is a seal proof's circuit.
func sealSpec(info proofs.SealProofInfo) *spec {
	cs := circuit.ShapeOf(info)
	known, ok := knownCounts[info.SectorSize]
	return &spec{
		name: info.Name, key: "stacked " + cs.String(), sectorSize: info.SectorSize, numInputs: cs.NumInputs(),
		prefix:    PairPrefix + info.TreeR.String() + "-sha256_hasher-",
		shapeName: "stacked-" + info.Name,
		synth:     func(cs r1cs.System) error { return circuit.Synthesize(cs, circuit.ShapeOf(info), nil) },
		known:     known, knownOK: ok,
	}
}

// updateSpec is an update proof's circuit (EmptySectorUpdateCircuit; no
// registered update proof uses the Poseidon variant: filecoin-proofs'
// api/update.rs proves with EmptySectorUpdateCompound alone).
func updateSpec(info proofs.UpdateProofInfo) (*spec, error) {
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return nil, err
	}
	params, _ := update.ParamsFiles(update.CacheID(s))
	// The published name ends in the SHA-256 of the public parameters: a
	// development setup replaces that with its own identifier.
	prefix := params[:strings.LastIndexByte(params, '-')+1]
	known, ok := knownUpdateCounts[info.SectorSize]
	return &spec{
		name: UpdateProfile(info), key: fmt.Sprintf("update nodes=%d tree=%d-%d-%d", s.SectorNodes, s.Tree.Base, s.Tree.Sub, s.Tree.Top),
		sectorSize: info.SectorSize, numInputs: UpdateInputs,
		prefix:    prefix,
		shapeName: "update-" + info.Name,
		synth:     func(cs r1cs.System) error { return circuit.SynthesizeUpdate(cs, s, nil) },
		known:     known, knownOK: ok,
	}, nil
}

// synthesisKeys are what synthesizing sp's partitions needs of its keys,
// without them: its name and its known counts (ok false: unknown). Only
// synthesis may use them: they hold no prover and no verifying key.
func synthesisKeys(sp *spec) (*keys, bool) {
	if !sp.knownOK {
		return nil, false
	}
	return &keys{key: sp.key, counts: sp.known}, true
}
