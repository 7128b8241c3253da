package snark_test

import (
	"context"
	"os"
	"testing"

	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/snark"
)

// The plan's file sizes are exact: a development setup's .params and .vk
// have the sizes PlanOf computes from the counted circuit, for a PoSt, a
// seal and an update proof (issue 56: `c2flow plan` sizes a box before it
// is bought, so its figures are checked against files made here).
func TestPlanIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("development setups of 2KiB circuits")
	}
	for _, proof := range []string{"StackedDrgWinning2KiBV1", "StackedDrgWindow2KiBV1_2", "StackedDrg2KiBV1_1", snark.UpdatePrefix + "StackedDrg2KiBV1"} {
		p, err := snark.PlanOf(proof)
		if err != nil {
			t.Fatal(err)
		}
		files, err := snark.DevSetup(context.Background(), proof, fctest.DevParams(), fctest.Setups(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			file string
			want int64
		}{{files.Params, p.ParamsBytes}, {files.VK, p.VKBytes}} {
			fi, err := os.Stat(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != c.want {
				t.Errorf("%s: %s is %d bytes, the plan says %d", proof, c.file, fi.Size(), c.want)
			}
		}
	}
}

// Planned at 32GiB: a PoRep partition's key is tens of GB, its job 10
// partitions; a WinningPoSt's key is 192 MB (the file a development
// setup writes: 192,050,232 bytes, measured).
func TestPlan32GiB(t *testing.T) {
	win, err := snark.PlanOf("StackedDrgWinning32GiBV1")
	if err != nil {
		t.Fatal(err)
	}
	if win.ParamsBytes != 192_050_232 {
		t.Errorf("32GiB WinningPoSt .params: %d bytes planned, the development setup's is 192050232", win.ParamsBytes)
	}
	if testing.Short() {
		return
	}
	porep, err := snark.PlanOf("StackedDrg32GiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	if porep.Partitions != 10 || porep.KeyBytes < 40e9 || porep.KeyBytes > 60e9 {
		t.Errorf("32GiB PoRep: %d partitions, key %d bytes; want 10 and about 47 GB", porep.Partitions, porep.KeyBytes)
	}
}
