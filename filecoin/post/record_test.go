package post

import (
	"encoding/json"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// FuzzParseRecord: whatever the line, the parser answers (a record or
// an error) without panicking, and a record it accepts has the shape
// verification relies on.
func FuzzParseRecord(f *testing.F) {
	rec := Record{RegisteredProof: "StackedDrgWindow2KiBV1_2", Replicas: []Replica{{SectorID: 1}, {SectorID: 2}, {SectorID: 3}}, Proof: make([]byte, 384)}
	b, err := json.Marshal(&rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	rec = Record{RegisteredProof: "StackedDrgWinning2KiBV1", Replicas: []Replica{{SectorID: 9}}, Proof: make([]byte, 192)}
	if b, err = json.Marshal(&rec); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"registered_proof":10,"prover_id":[null],"randomness":[1.5],"replicas":[{}],"proof":[-1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, info, err := ParseRecord(line)
		if err != nil {
			return
		}
		n := len(r.Proof) / proofs.SinglePartitionProofLen
		if len(r.Proof) == 0 || len(r.Proof)%proofs.SinglePartitionProofLen != 0 || info.Partitions(len(r.Replicas)) != n || sortedReplicas(r.Replicas) != nil {
			t.Fatalf("accepted a record of %d proof bytes and %d replicas", len(r.Proof), len(r.Replicas))
		}
	})
}
