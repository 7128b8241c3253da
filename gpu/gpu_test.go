package gpu

import (
	"context"
	"testing"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/yield"
)

// A CPU MSM of work that yields to urgent work runs in chunks with a
// checkpoint between them: the same sum as whole, and under a held gate
// it waits between chunks (not before the first) until the gate opens.
func TestCPUMSMYieldsBetweenChunks(t *testing.T) {
	const n = 1000
	_, _, g, _ := curve.Generators()
	scalars := make([]fr.Element, n)
	for i := range scalars {
		scalars[i].SetRandom()
	}
	points := curve.BatchScalarMultiplicationG1(&g, scalars)
	for i := range scalars {
		scalars[i].SetRandom()
	}
	c := &CPU{YieldChunk: 300}
	want, err := c.MSMG1(context.Background(), points, scalars)
	if err != nil {
		t.Fatal(err)
	}
	gate := yield.New(time.Millisecond, time.Minute)
	ctx := yield.Yielding(context.Background(), gate)
	got, err := c.MSMG1(ctx, points, scalars)
	if err != nil || !got.Equal(&want) {
		t.Fatalf("chunked: %v, equal %v", err, got.Equal(&want))
	}

	release := gate.Hold()
	done := make(chan curve.G1Jac, 1)
	go func() {
		r, err := c.MSMG1(ctx, points, scalars)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("the MSM ran past a held gate")
	default:
	}
	release()
	if r := <-done; !r.Equal(&want) {
		t.Fatal("the MSM resumed after a yield differs")
	}
	if st := gate.Stats(); st.Yields != 1 {
		t.Errorf("gate stats %+v: one wait, at the first checkpoint", st)
	}
	if w := yield.Waited(ctx); w < 150*time.Millisecond {
		t.Errorf("the work waited %v in all", w)
	}
}
