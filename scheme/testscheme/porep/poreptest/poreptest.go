// Package poreptest provides sealed test sectors and the catalogue of C1
// corruptions that tests of several packages (native verification, circuit,
// pipeline) must all reject.
package poreptest

import (
	"testing"

	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// Sector seals sector id of the named profile with fixed randomness.
func Sector(t testing.TB, profile string, id uint64) *porep.Sector {
	t.Helper()
	p, err := porep.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := porep.Seal(p, Info(id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Info is the identity of test sector id.
func Info(id uint64) porep.SectorInfo {
	info := porep.SectorInfo{SectorID: id}
	info.Seed[0], info.Ticket[0], info.ProverID[0] = 1, 2, 3
	info.Seed[31] = byte(id)
	return info
}

// Tamper is one kind of corruption of a C1 and the error that native
// verification must report for it.
type Tamper struct {
	Name string
	Want error
	Do   func(c *porep.C1)
}

// Tampers lists the corruptions every verifier of c2flow must reject. Each
// leaves the C1 well-formed: only the proofs are wrong.
var Tampers = []Tamper{
	{"flipped data sibling", porep.ErrCommD, func(c *porep.C1) { c.Partitions[0].Challenges[0].DataPath[2].SetUint64(12345) }},
	{"flipped column sibling", porep.ErrCommC, func(c *porep.C1) { c.Partitions[0].Challenges[0].ColumnPath[0].SetUint64(1) }},
	{"wrong drg parent label", porep.ErrCommC, func(c *porep.C1) { c.Partitions[0].Challenges[0].DRG[3].Column[0].SetUint64(5) }},
	{"wrong expander parent label", porep.ErrCommC, func(c *porep.C1) { c.Partitions[0].Challenges[0].Exp[2].Column[0].SetUint64(5) }},
	{"wrong challenged label", porep.ErrCommC, func(c *porep.C1) { c.Partitions[0].Challenges[1].Column[0].SetUint64(5) }},
	{"flipped replica sibling", porep.ErrCommRLast, func(c *porep.C1) { c.Partitions[0].Challenges[1].ReplicaPath[1].SetUint64(9) }},
	{"wrong comm_r", porep.ErrCommR, func(c *porep.C1) { c.CommR.SetUint64(42) }},
	{"challenge from another seed", porep.ErrChallenge, func(c *porep.C1) { c.Seed[5] ^= 0xff }},
}
