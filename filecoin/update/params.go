package update

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/circuit"
)

// ParamsVersion is the prefix of every published Groth16 parameter file
// (filecoin-proofs' VERSION, "v28").
const ParamsVersion = "v28"

// CacheID is the update circuit's parameter identifier, as
// storage-proofs-core's CacheableParameters::cache_identifier makes it for
// EmptySectorUpdateCompound: "empty-sector-update-" and tree R's display
// ("merkletree-poseidon_hasher-8-8-0"), then the hex SHA-256 of the public
// parameters' identifier ("empty_sector_update::PublicParams{ sector_nodes:
// N }"). The published files are ParamsVersion-CacheID.params and .vk.
func CacheID(s circuit.UpdateShape) string { return cacheID("empty-sector-update", s) }

// PoseidonCacheID is CacheID of the Poseidon variant
// (EmptySectorUpdateCompound of poseidon/compound.rs: cache prefix
// "empty-sector-update-poseidon", the same public parameters).
func PoseidonCacheID(s circuit.UpdateShape) string { return cacheID("empty-sector-update-poseidon", s) }

func cacheID(prefix string, s circuit.UpdateShape) string {
	id := fmt.Sprintf("empty_sector_update::PublicParams{ sector_nodes: %d }", s.SectorNodes)
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("%s-merkletree-poseidon_hasher-%d-%d-%d-%s", prefix, s.Tree.Base, s.Tree.Sub, s.Tree.Top, hex.EncodeToString(h[:]))
}

// ParamsFiles are the names of a circuit's published .params and .vk
// files for its cache identifier (CacheID, PoseidonCacheID).
func ParamsFiles(cacheID string) (params, vk string) {
	base := ParamsVersion + "-" + cacheID
	return base + ".params", base + ".vk"
}
