package job

import (
	"encoding/json"
	"testing"
)

// Every activity input that embeds a SectorRef keeps its declared proof
// across Temporal's JSON: a field of the same JSON name beside the
// embedded ref would shadow it (StoreInput once did, and a Filecoin
// sector's C2 was then checked as a test-scheme one).
func TestInputsKeepTheDeclaredProof(t *testing.T) {
	ref := SectorRef{ProverID: "0f", SectorID: 7, C1Digest: "ab", Profile: "StackedDrg2KiBV1_1"}
	for name, v := range map[string]any{
		"SectorInput": &SectorInput{SectorRef: ref},
		"SynthInput":  &SynthInput{SectorRef: ref},
		"HandleInput": &HandleInput{SectorRef: ref},
		"StoreInput":  &StoreInput{SectorRef: ref},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			SectorRef
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.SectorRef != ref {
			t.Errorf("%s: %s decodes to %+v", name, b, back.SectorRef)
		}
	}
}
