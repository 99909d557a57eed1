package fileops

import "errors"

// The guest and the host talk in a small binary format rather than JSON: a
// 1 KiB read must cost microseconds, and encoding/json would also double the
// guest's size. A request is an op byte and its fields; a reply is a status
// byte (0, or the Kind of the failure and its message) and the results.
// Integers are varints and strings are length-prefixed.

const (
	opRead byte = iota + 1
	opList
	opEdit
	opRename
	opRemove
)

type encoder struct{ b []byte }

// int appends v zigzag-encoded as a varint, as encoding/binary does; that
// package is not used because it would bring reflect into the guest.
func (e *encoder) int(v int64) {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		e.b = append(e.b, byte(u)|0x80)
		u >>= 7
	}
	e.b = append(e.b, byte(u))
}

// start begins a message of about n bytes with its first byte: an op for
// a request, 0 for a successful reply.
func (e *encoder) start(first byte, n int) *encoder {
	e.b = append(make([]byte, 0, n), first)
	return e
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) str(s string)   { e.int(int64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) stamp(s Stamp)  { e.int(s.Size); e.int(s.ModTime) }
func (e *encoder) byte(v byte)    { e.b = append(e.b, v) }
func (e *encoder) bytes() []byte  { return e.b }
func (e *encoder) fail(err error) { e.b = e.b[:0]; e.byte(byte(kindOf(err))); e.str(err.Error()) }

var errShort = errors.New("fileops: truncated message")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) int() int64 {
	var u uint64
	for i, c := range d.b {
		if i == 10 {
			break
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.b = d.b[i+1:]
			return int64(u>>1) ^ -int64(u&1)
		}
	}
	d.err, d.b = errShort, nil
	return 0
}

func (d *decoder) str() string {
	n := d.int()
	if n < 0 || n > int64(len(d.b)) {
		d.err, d.b = errShort, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bool() bool   { return d.byte() == 1 }
func (d *decoder) stamp() Stamp { return Stamp{Size: d.int(), ModTime: d.int()} }

func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Other
}

// Serve runs one encoded request against o and returns the encoded reply.
// It is the whole of the guest's logic; the host calls it directly for its
// baseline.
func Serve(o Ops, req []byte) []byte {
	e := new(encoder)
	if err := serve(o, &decoder{b: req}, e); err != nil {
		e.fail(err)
	}
	return e.bytes()
}

var errMalformed = &Error{Kind: Other, Msg: "fileops: malformed request"}

// serve decodes and runs one request and encodes its successful reply.
func serve(o Ops, d *decoder, e *encoder) error {
	switch d.byte() {
	case opRead:
		rel, offset, limit, budget := d.str(), d.int(), d.int(), d.int()
		if d.err != nil {
			return errMalformed
		}
		r, err := o.Read(rel, int(offset), int(limit), int(budget))
		if err != nil {
			return err
		}
		e.start(0, len(r.Text)+64)
		e.str(r.Text)
		e.int(int64(r.First))
		e.int(int64(r.Last))
		e.bool(r.More)
		e.bool(r.Cut)
		e.int(int64(r.Lines))
		e.int(r.Size)
		e.stamp(r.Stamp)
		return nil
	case opList:
		rel := d.str()
		if d.err != nil {
			return errMalformed
		}
		entries, err := o.List(rel)
		if err != nil {
			return err
		}
		e.start(0, 16*len(entries)+8)
		e.int(int64(len(entries)))
		for _, en := range entries {
			e.str(en.Name)
			e.bool(en.Dir)
		}
		return nil
	case opEdit:
		var req EditRequest
		req.Rel, req.Old, req.New = d.str(), d.str(), d.str()
		if d.bool() {
			s := d.stamp()
			req.Expect = &s
		}
		req.DryRun = d.bool()
		if d.err != nil {
			return errMalformed
		}
		r, err := o.Edit(req)
		if err != nil {
			return err
		}
		e.start(0, len(r.Target)+len(r.Temp)+48)
		e.bool(r.Created)
		e.int(int64(r.Count))
		e.str(r.Target)
		e.str(r.Temp)
		e.stamp(r.Stamp)
		return nil
	case opRename:
		from, to := d.str(), d.str()
		if d.err != nil {
			return errMalformed
		}
		s, err := o.Rename(from, to)
		if err != nil {
			return err
		}
		e.start(0, 24)
		e.stamp(s)
		return nil
	case opRemove:
		rel := d.str()
		if d.err != nil {
			return errMalformed
		}
		if err := o.Remove(rel); err != nil {
			return err
		}
		e.start(0, 1)
		return nil
	}
	return errMalformed
}

// A Transport carries an encoded request to Serve, wherever that runs, and
// returns its reply.
type Transport func(req []byte) ([]byte, error)

// Client encodes requests, sends them through a Transport, and decodes the
// replies.
type Client struct{ Send Transport }

func (c Client) call(e *encoder) (*decoder, error) {
	reply, err := c.Send(e.bytes())
	if err != nil {
		return nil, err
	}
	d := &decoder{b: reply}
	if status := d.byte(); status != 0 {
		msg := d.str()
		if d.err != nil {
			return nil, d.err
		}
		return nil, &Error{Kind: Kind(status), Msg: msgFor(Kind(status), msg)}
	}
	return d, d.err
}

// msgFor keeps the message only where the kind alone does not say it all.
func msgFor(k Kind, msg string) string {
	if k == Other {
		return msg
	}
	return ""
}

func (c Client) Read(rel string, offset, limit, budget int) (ReadReply, error) {
	e := new(encoder).start(opRead, len(rel)+32)
	e.str(rel)
	e.int(int64(offset))
	e.int(int64(limit))
	e.int(int64(budget))
	d, err := c.call(e)
	if err != nil {
		return ReadReply{}, err
	}
	r := ReadReply{Text: d.str(), First: int(d.int()), Last: int(d.int()), More: d.bool(), Cut: d.bool(),
		Lines: int(d.int()), Size: d.int(), Stamp: d.stamp()}
	return r, d.err
}

func (c Client) List(rel string) ([]Entry, error) {
	e := new(encoder).start(opList, len(rel)+8)
	e.str(rel)
	d, err := c.call(e)
	if err != nil {
		return nil, err
	}
	n := d.int()
	if n < 0 || n > int64(len(d.b)) {
		return nil, errShort
	}
	entries := make([]Entry, 0, n)
	for range n {
		entries = append(entries, Entry{Name: d.str(), Dir: d.bool()})
	}
	return entries, d.err
}

func (c Client) Edit(req EditRequest) (EditReply, error) {
	e := new(encoder).start(opEdit, len(req.Rel)+len(req.Old)+len(req.New)+48)
	e.str(req.Rel)
	e.str(req.Old)
	e.str(req.New)
	e.bool(req.Expect != nil)
	if req.Expect != nil {
		e.stamp(*req.Expect)
	}
	e.bool(req.DryRun)
	d, err := c.call(e)
	if err != nil {
		return EditReply{}, err
	}
	r := EditReply{Created: d.bool(), Count: int(d.int()), Target: d.str(), Temp: d.str(), Stamp: d.stamp()}
	return r, d.err
}

func (c Client) Rename(from, to string) (Stamp, error) {
	e := new(encoder).start(opRename, len(from)+len(to)+8)
	e.str(from)
	e.str(to)
	d, err := c.call(e)
	if err != nil {
		return Stamp{}, err
	}
	s := d.stamp()
	return s, d.err
}

func (c Client) Remove(rel string) error {
	e := new(encoder).start(opRemove, len(rel)+8)
	e.str(rel)
	_, err := c.call(e)
	return err
}
