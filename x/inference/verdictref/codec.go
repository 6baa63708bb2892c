package verdictref

import (
	"encoding/json"
	"fmt"
)

// Codec is the collections value codec of a Reference (Encode, Decode).
type Codec struct{}

func (Codec) Encode(r Reference) ([]byte, error) { return Encode(r) }

func (Codec) Decode(in []byte) (Reference, error) { return Decode(in) }

// EncodeJSON is the binary form as a JSON string.
func (Codec) EncodeJSON(r Reference) ([]byte, error) {
	b, err := Encode(r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(b)
}

func (Codec) DecodeJSON(in []byte) (Reference, error) {
	var b []byte
	if err := json.Unmarshal(in, &b); err != nil {
		return Reference{}, err
	}
	return Decode(b)
}

func (Codec) Stringify(r Reference) string {
	return fmt.Sprintf("verdictref{current %d: epoch %d, %d members, %x; previous %d: epoch %d, %d members, %x}",
		r.Current.Since, r.Current.Epoch, r.Current.Members, r.Current.Samples,
		r.Previous.Since, r.Previous.Epoch, r.Previous.Members, r.Previous.Samples)
}

func (Codec) ValueType() string { return "inference/verdict-reference/v1" }
