package cli

import (
	"flag"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/snark"
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
		if c[i], err = snark.ParseCommitment(v.s, v.k); err != nil {
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

// Public is the update's public data (snark.UpdatePublic).
func (f *UpdateFlags) Public() (*snark.UpdateSector, error) {
	info, err := f.Info()
	if err != nil {
		return nil, err
	}
	c, err := f.Commitments()
	if err != nil {
		return nil, err
	}
	return snark.UpdatePublic(info, c[0], c[1], c[2])
}
