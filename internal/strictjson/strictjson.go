// Package strictjson decodes one JSON object strictly: an input file is
// refused, not half read, when it carries what its reader does not know.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrTrailing is returned for data after the object.
var ErrTrailing = errors.New("data after the JSON object")

// Decode decodes raw, one JSON object, into v: a field v does not have is
// an error, and so is anything after the object but whitespace.
func Decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return ErrTrailing
	}
	return nil
}
