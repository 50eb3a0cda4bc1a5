package wire

// Encoder is implemented by every canonical type: it renders the value as a
// JSON tree in the shape of one revision, leaving out members that revision
// does not define. Revision -1 (AllRevisions) keeps everything.
type Encoder interface {
	EncodeValue(rev int) any
}

// AllRevisions asks an Encoder for the canonical shape, dropping nothing.
const AllRevisions = -1
