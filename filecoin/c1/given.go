package c1

// Given is the public data a C1 is checked against as a user gives it
// (c2flow c1 check's flags); empty fields come from elsewhere (a
// sectors.json beside the file, or the file itself).
type Given struct {
	ProverID, SectorID         string // hex of 32 bytes; decimal
	Ticket, Seed, CommD, CommR string // hex of 32 bytes
	Proof                      string // registered seal proof name
}

// Any reports whether any field besides ProverID is set.
func (p Given) Any() bool {
	return p.SectorID != "" || p.Ticket != "" || p.Seed != "" || p.CommD != "" || p.CommR != "" || p.Proof != ""
}
