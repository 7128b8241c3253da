package update

import (
	"encoding/json"
	"testing"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// Every registered update proof's parameter files, named as
// cache_identifier names them from its sector size and tree R shape, are
// listed in rust-fil-proofs' parameters.json with that sector size: the
// shapes here are the ones Filecoin's update parameters were made for.
// The Poseidon variant's, published for 32GiB and 64GiB, too.
func TestParamsFilesInParametersJSON(t *testing.T) {
	var entries map[string]struct {
		SectorSize uint64 `json:"sector_size"`
	}
	if err := json.Unmarshal(upstreamdata.Read(t, upstreamdata.ParametersJSON), &entries); err != nil {
		t.Fatal(err)
	}
	for _, name := range proofs.UpdateNames() {
		info, err := proofs.UpdateByName(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := circuit.UpdateShapeOf(info.SectorSize)
		if err != nil {
			t.Fatal(err)
		}
		params, vk := ParamsFiles(CacheID(s))
		files := []string{params, vk}
		if info.SectorSize >= 32<<30 { // the Poseidon variant is published for 32GiB and 64GiB
			pp, pv := ParamsFiles(PoseidonCacheID(s))
			files = append(files, pp, pv)
		}
		for _, f := range files {
			e, ok := entries[f]
			if !ok {
				t.Errorf("%s: %s is not in parameters.json", name, f)
				continue
			}
			if e.SectorSize != info.SectorSize {
				t.Errorf("%s: %s has sector_size %d, want %d", name, f, e.SectorSize, info.SectorSize)
			}
		}
	}
}
