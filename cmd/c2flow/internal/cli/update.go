package cli

import (
	"flag"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/scheme"
)

// UpdateFlags name a SnapDeals update by its public data: the registered
// update proof and the three commitments (64 hex digits, or the CIDs
// Curio and lotus print: sector key and sealed CIDs for comm_r, the
// unsealed CID for comm_d).
type UpdateFlags struct {
	Proof, CommROld, CommRNew, CommDNew string
}

// Add adds the flags to fs.
func (f *UpdateFlags) Add(fs *flag.FlagSet) {
	fs.StringVar(&f.Proof, "update-proof", "", "a SnapDeals update proof: the registered update proof (StackedDrg2KiBV1 ... StackedDrg64GiBV1), with --comm-r-old, --comm-r-new and --comm-d-new instead of --c1")
	fs.StringVar(&f.CommROld, "comm-r-old", "", "update: comm_r_old, the sector key (hex or CID)")
	fs.StringVar(&f.CommRNew, "comm-r-new", "", "update: comm_r_new, the new sealed CID (hex or CID)")
	fs.StringVar(&f.CommDNew, "comm-d-new", "", "update: comm_d_new, the new unsealed CID (hex or CID)")
}

// Commitments are the three commitments, in the order comm_r_old,
// comm_r_new, comm_d_new.
func (f *UpdateFlags) Commitments() ([3][32]byte, error) {
	var c [3][32]byte
	var err error
	for i, v := range []struct {
		flag, s string
		k       commcid.Kind
	}{{"comm-r-old", f.CommROld, commcid.Sealed}, {"comm-r-new", f.CommRNew, commcid.Sealed}, {"comm-d-new", f.CommDNew, commcid.Unsealed}} {
		if v.s == "" {
			return c, fmt.Errorf("--update-proof needs --%s", v.flag)
		}
		if c[i], err = parseCommitment(v.s, v.k); err != nil {
			return c, fmt.Errorf("--%s: %w", v.flag, err)
		}
	}
	return c, nil
}

// Info is the registered update proof --update-proof names.
func (f *UpdateFlags) Info() (proofs.UpdateProofInfo, error) {
	info, err := proofs.UpdateByName(f.Proof)
	if err != nil {
		return info, fmt.Errorf("--update-proof: %w", err)
	}
	return info, nil
}

// parseCommitment reads a commitment as hex or as a CID string. A CID
// string can be 64 characters long too (a CommD's is): hex only where
// every digit is one.
func parseCommitment(s string, kind commcid.Kind) ([32]byte, error) {
	if c, err := seal.ParseHex32(s); err == nil {
		return c, nil
	}
	return commcid.ParseString(s, kind)
}

// Updater is what the update commands ask of the scheme that admits
// SnapDeals requests.
type Updater interface {
	scheme.Scheme
	// UpdateProofName is the pipeline's name of a registered update proof.
	UpdateProofName(info proofs.UpdateProofInfo) string
	// PublicSector is an update's public data alone, by its registered
	// update proof's name.
	PublicSector(proof string, commROld, commRNew, commDNew [32]byte) (scheme.Sector, error)
}

// UpdaterOf is the scheme of set that admits SnapDeals requests.
func UpdaterOf(set scheme.Set) (Updater, error) {
	a, err := set.Admitter(scheme.KindSnap)
	if err != nil {
		return nil, err
	}
	return scheme.As[Updater](a, "update proof names")
}

// Public is the update's public data, as set's SnapDeals scheme makes it.
func (f *UpdateFlags) Public(set scheme.Set) (scheme.Sector, error) {
	info, err := f.Info()
	if err != nil {
		return nil, err
	}
	c, err := f.Commitments()
	if err != nil {
		return nil, err
	}
	u, err := UpdaterOf(set)
	if err != nil {
		return nil, err
	}
	return u.PublicSector(info.Name, c[0], c[1], c[2])
}
