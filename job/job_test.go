package job

import (
	"encoding/json"
	"testing"
	"time"
)

// Every activity input that embeds a Ref keeps its declared proof
// across Temporal's JSON: a field of the same JSON name beside the
// embedded ref would shadow it (StoreInput once did, and a Filecoin
// sector's C2 was then checked as a test-scheme one).
func TestInputsKeepTheDeclaredProof(t *testing.T) {
	ref := Ref{ProverID: "0f", SectorID: 7, InputDigest: "ab", Proof: "StackedDrg2KiBV1_1"}
	for name, v := range map[string]any{
		"SectorInput": &SectorInput{Ref: ref},
		"SynthInput":  &SynthInput{Ref: ref},
		"HandleInput": &HandleInput{Ref: ref},
		"StoreInput":  &StoreInput{Ref: ref},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Ref
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Ref != ref {
			t.Errorf("%s: %s decodes to %+v", name, b, back.Ref)
		}
	}
}

// The defaults ride out a stall of minutes (a C2's witness costs minutes
// to remake); the urgent preset gives up within seconds and is complete,
// so WithDefaults adds no C2-sized timeout to it.
func TestTimeoutsFitTheKind(t *testing.T) {
	d := Timeouts{}.WithDefaults()
	if d.Heartbeat < 2*time.Minute || d.HostQueue < d.Heartbeat {
		t.Errorf("default heartbeat %v, host queue %v: a C2 partition must ride out a stall of minutes", d.Heartbeat, d.HostQueue)
	}
	u := UrgentTimeouts()
	if u.WithDefaults() != u {
		t.Errorf("UrgentTimeouts %+v leaves a field to the C2 defaults", u)
	}
	// A dead host's WinningPoSt is taken over within 10 s.
	if u.Heartbeat > 10*time.Second || u.HostQueue > 10*time.Second || u.Device > 2*time.Minute || u.Synth > 2*time.Minute {
		t.Errorf("UrgentTimeouts %+v: a WinningPoSt cannot wait that long", u)
	}
}
