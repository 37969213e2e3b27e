package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request is a Kafka request that encodes itself, as franz-go's
// kmsg.Request: the adapter negotiates a version in [MinVersion,
// MaxVersion] with the broker and frames the request with EncodeRequest.
// Every version a Request offers is non-flexible: its frame has request
// header v1 and its response header v0 (the correlation id alone).
type Request interface {
	// Key is the request's API key.
	Key() int16
	// MinVersion is the lowest version catchup can send and read.
	MinVersion() int16
	// MaxVersion is the highest version catchup can send and read.
	MaxVersion() int16
	// AppendTo appends the request body at version, after the request
	// header, to dst. It returns an error for a request it cannot encode.
	AppendTo(dst []byte, version int16) ([]byte, error)
}

// Response is a response that reads itself from its body (after the
// correlation id) at the version its request was sent with.
type Response interface {
	ReadFrom(body []byte, version int16) error
}

var (
	_ Request  = (*FetchRequest)(nil)
	_ Request  = (*ProduceRequest)(nil)
	_ Response = (*FetchResponse)(nil)
)

// sizer is a Request that knows a bound of its body's size, for a frame
// taken from the produce frames' free list and encoded without growing.
type sizer interface{ bodyCap() int }

// requestHeaderLen is the size of a request frame up to its client id: the
// size, API key, version, correlation id and client id length.
const requestHeaderLen = 4 + 2 + 2 + 4 + 2

// EncodeRequest returns r framed at version with correlation id corr and
// client id clientID (request header v1). The caller releases the frame
// once it is written.
func EncodeRequest(r Request, version int16, corr int32, clientID string) (*Frame, error) {
	if version < r.MinVersion() || version > r.MaxVersion() {
		return nil, fmt.Errorf("request %d: version %d, want %d to %d", r.Key(), version, r.MinVersion(), r.MaxVersion())
	}
	size := requestHeaderLen + len(clientID)
	var f *Frame
	if s, ok := r.(sizer); ok {
		f = getFrame(frames, size+s.bodyCap())
	} else {
		f = getFrame(smallFrames, size+256)
	}
	b := f.buf
	b = binary.BigEndian.AppendUint32(b, 0) // size, set below
	b = binary.BigEndian.AppendUint16(b, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = appendString(b, clientID)
	b, err := r.AppendTo(b, version)
	f.buf = b
	if err != nil {
		f.Release()
		return nil, err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return f, nil
}

// Kmsg is req, a kmsg request of an API kafka-go does not implement, as a
// Request of the one version set in it, which must be non-flexible.
func Kmsg(req kmsg.Request) Request { return kmsgRequest{req} }

type kmsgRequest struct{ req kmsg.Request }

func (k kmsgRequest) Key() int16        { return k.req.Key() }
func (k kmsgRequest) MinVersion() int16 { return k.req.GetVersion() }
func (k kmsgRequest) MaxVersion() int16 { return k.req.GetVersion() }

func (k kmsgRequest) AppendTo(dst []byte, version int16) ([]byte, error) {
	k.req.SetVersion(version)
	if k.req.IsFlexible() {
		return dst, fmt.Errorf("request %d: version %d is flexible: its header is not v1", k.req.Key(), version)
	}
	return k.req.AppendTo(dst), nil
}
