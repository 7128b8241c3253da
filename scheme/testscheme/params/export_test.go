package params

import (
	"bytes"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
)

// ReadPK and ReadVK run the key-file readers a load uses over b.
func ReadPK(b []byte, ccs *csbls.R1CS) (*groth16bls.ProvingKey, string, error) {
	return readPK(bytes.NewReader(b), int64(len(b)), shapeOf(ccs))
}

func ReadVK(b []byte) (*groth16bls.VerifyingKey, string, error) {
	return readVK(bytes.NewReader(b), int64(len(b)))
}
