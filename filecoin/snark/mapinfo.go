package snark

import "context"

// Mapped is what a process holds of one circuit once loaded: its key file
// and its system, both mapped (shared by every process of the box).
type Mapped struct {
	Digest      string
	KeyBytes    int64 // 0: the circuit alone
	SystemBytes int64
	// Touch reads every mapped page, as a proof reads every point and
	// row: what a worker holds after its first proof.
	Touch func() int64
}

// Map loads proof's circuit (a seal, update or PoSt proof's) as a worker
// does on first use: with withKey its proving key too (its parameters
// must be in place, as for proving), else the recorded system alone.
func (s *Scheme) Map(ctx context.Context, proof string, withKey bool) (Mapped, error) {
	sp, err := specOf(proof)
	if err != nil {
		return Mapped{}, err
	}
	if !withKey {
		c, err := s.keyring.circuitOf(ctx, sp)
		if err != nil {
			return Mapped{}, err
		}
		m := Mapped{Digest: c.digest, SystemBytes: c.sys.Bytes(), Touch: func() int64 { return 0 }}
		if ms, ok := s.keyring.mappedSystem(sp); ok {
			m.Touch = ms.Touch
		}
		return m, nil
	}
	k, err := s.keyring.circuit(ctx, sp)
	if err != nil {
		return Mapped{}, err
	}
	m := Mapped{Digest: k.digest, KeyBytes: k.mapped.FileBytes(), SystemBytes: k.prover.Keys.SystemBytes(), Touch: k.mapped.Touch}
	if ms, ok := s.keyring.mappedSystem(sp); ok {
		m.Touch = func() int64 { return k.mapped.Touch() + ms.Touch() }
	}
	return m, nil
}
