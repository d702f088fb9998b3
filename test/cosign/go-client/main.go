// An independent tlog-witness client built only on Debian's golang.org/x/mod (sumdb/note,
// sumdb/tlog), for test/cosign/interop-go.test.ts. It plays a log (the Appendix C key of
// research/c2sp-and-peers.md, leaves "leaf 0", "leaf 1", …) against the witness at -url and checks
// each answer: statuses, the 409 body and type, and that every cosignature verifies as
// cosignature/v1 (type 0x04) under -witness, with x/mod's note.Open doing the note rules.
//
// Build (GOPATH mode, no network): GO111MODULE=off GOPATH=/usr/share/gocode go build -o client main.go
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const logSkey = "PRIVATE+KEY+example.com/log+01882cac+AUBBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5f"
const origin = "example.com/log"

// cosigVerifier verifies cosignature/v1 (signature type 0x04) lines; x/mod v0.7.0 knows only 0x01.
type cosigVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
	last uint64
}

func (v *cosigVerifier) Name() string    { return v.name }
func (v *cosigVerifier) KeyHash() uint32 { return v.hash }
func (v *cosigVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig[:8])
	m := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	if !ed25519.Verify(v.key, m, sig[8:]) {
		return false
	}
	v.last = t
	return true
}

func parseCosigVkey(vkey string) (*cosigVerifier, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return nil, errors.New("malformed vkey")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		return nil, errors.New("not a type 0x04 Ed25519 vkey")
	}
	h := sha256.New()
	h.Write([]byte(parts[0] + "\n"))
	h.Write(raw)
	id := binary.BigEndian.Uint32(h.Sum(nil)[:4])
	if fmt.Sprintf("%08x", id) != parts[1] {
		return nil, errors.New("key ID mismatch")
	}
	return &cosigVerifier{name: parts[0], hash: id, key: ed25519.PublicKey(raw[1:])}, nil
}

type hashes []tlog.Hash

func (h *hashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, j := range idx {
		out[i] = (*h)[j]
	}
	return out, nil
}

var (
	url     = flag.String("url", "", "witness base URL")
	witness = flag.String("witness", "", "witness cosignature vkey (type 0x04)")
	cpURL   = flag.String("checkpoint-url", "", "witnessed-log mode: GET this checkpoint and verify it (SPEC §4.1)")
	logVkey = flag.String("log-vkey", "", "witnessed-log mode: the log's vkey (type 0x01)")
	store   hashes
	leaves  int64
	signer  note.Signer
	logV    note.Verifier
	wit     *cosigVerifier
)

func grow(n int64) {
	for ; leaves < n; leaves++ {
		hs, err := tlog.StoredHashes(leaves, []byte(fmt.Sprintf("leaf %d", leaves)), &store)
		must(err)
		store = append(store, hs...)
	}
}

func root(n int64) tlog.Hash {
	if n == 0 {
		return tlog.Hash(sha256.Sum256(nil))
	}
	grow(n)
	h, err := tlog.TreeHash(n, &store)
	must(err)
	return h
}

func checkpoint(o string, n int64, r tlog.Hash) []byte {
	text := fmt.Sprintf("%s\n%d\n%s\n", o, n, base64.StdEncoding.EncodeToString(r[:]))
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	must(err)
	return msg
}

func proof(old, n int64) []tlog.Hash {
	if old == 0 || old == n {
		return nil
	}
	grow(n)
	p, err := tlog.ProveTree(n, old, &store)
	must(err)
	return p
}

func post(old int64, p []tlog.Hash, cp []byte) (int, string, string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range p {
		fmt.Fprintf(&b, "%s\n", base64.StdEncoding.EncodeToString(h[:]))
	}
	b.WriteString("\n")
	b.Write(cp)
	resp, err := http.Post(*url+"/add-checkpoint", "text/plain", &b)
	must(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

func verifyCosigned(cp []byte, resp string, what string) {
	n, err := note.Open(append(append([]byte{}, cp...), resp...), note.VerifierList(logV, wit))
	if err != nil {
		fail("%s: note.Open: %v", what, err)
	}
	if len(n.Sigs) != 2 {
		fail("%s: expected log + witness signatures, got %d", what, len(n.Sigs))
	}
	if d := time.Since(time.Unix(int64(wit.last), 0)); d < -time.Minute || d > time.Minute {
		fail("%s: cosignature timestamp %d is not fresh", what, wit.last)
	}
	fmt.Printf("ok   %s: cosignature verified (time %d)\n", what, wit.last)
}

func expect(what string, status int, ctype, body string, wantStatus int, wantBody string) {
	if status != wantStatus {
		fail("%s: status %d, want %d (%q)", what, status, wantStatus, body)
	}
	if wantStatus == 409 && ctype != "text/x.tlog.size" {
		fail("%s: 409 content type %q", what, ctype)
	}
	if wantBody != "" && body != wantBody {
		fail("%s: body %q, want %q", what, body, wantBody)
	}
	fmt.Printf("ok   %s: %d\n", what, status)
}

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// verifyWitnessed is the witnessed-log mode (test/log-witness): the checkpoint at -checkpoint-url
// must open under -log-vkey with x/mod's note rules and carry a verifying cosignature/v1 line of
// every witness in -witness (comma-separated).
func verifyWitnessed() {
	lv, err := note.NewVerifier(*logVkey)
	must(err)
	list := []note.Verifier{lv}
	for _, w := range strings.Split(*witness, ",") {
		v, err := parseCosigVkey(w)
		must(err)
		list = append(list, v)
	}
	resp, err := http.Get(*cpURL)
	must(err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(err)
	n, err := note.Open(body, note.VerifierList(list...))
	if err != nil {
		fail("witnessed checkpoint: note.Open: %v", err)
	}
	if len(n.Sigs) != len(list) {
		fail("witnessed checkpoint: %d of %d signatures verified", len(n.Sigs), len(list))
	}
	fmt.Printf("WITNESSED PASSED %d signatures\n", len(n.Sigs))
}

func main() {
	flag.Parse()
	if *cpURL != "" {
		verifyWitnessed()
		return
	}
	var err error
	signer, err = note.NewSigner(logSkey)
	must(err)
	logV, err = note.NewVerifier("example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd")
	must(err)
	wit, err = parseCosigVkey(*witness)
	must(err)

	cp5 := checkpoint(origin, 5, root(5))
	s, ct, b := post(0, nil, cp5)
	expect("old 0 -> 5", s, ct, b, 200, "")
	verifyCosigned(cp5, b, "old 0 -> 5")

	cp7 := checkpoint(origin, 7, root(7))
	s, ct, b = post(0, nil, cp7)
	expect("stale old 0 -> 7", s, ct, b, 409, "5\n")
	n, err := strconv.Atoi(strings.TrimSuffix(b, "\n"))
	must(err)

	p := proof(int64(n), 7)
	must(tlog.CheckTree(p, 7, root(7), int64(n), root(int64(n))))
	s, ct, b = post(int64(n), p, cp7)
	expect("old 5 -> 7 with proof", s, ct, b, 200, "")
	verifyCosigned(cp7, b, "old 5 -> 7")

	s, ct, b = post(7, nil, cp7)
	expect("same size, same root 7 -> 7", s, ct, b, 200, "")
	verifyCosigned(cp7, b, "7 -> 7")

	s, ct, b = post(8, nil, cp7)
	expect("old > size", s, ct, b, 400, "")

	cp9 := checkpoint(origin, 9, root(9))
	bad := proof(7, 9)
	bad[0][0] ^= 1
	s, ct, b = post(7, bad, cp9)
	expect("tampered proof", s, ct, b, 422, "")

	s, ct, b = post(7, proof(7, 9), checkpoint("example.com/other", 9, root(9)))
	expect("unknown origin", s, ct, b, 404, "")

	otherSkey, _, err := note.GenerateKey(nil, origin)
	if err == nil {
		other, _ := note.NewSigner(otherSkey)
		r9 := root(9)
		m, _ := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n9\n%s\n", origin, base64.StdEncoding.EncodeToString(r9[:]))}, other)
		s, ct, b = post(7, proof(7, 9), m)
		expect("no trusted signature", s, ct, b, 403, "")
	}

	sum := sha256.Sum256([]byte(origin))
	resp, err := http.Get(*url + "/" + hex.EncodeToString(sum[:]) + "/checkpoint")
	must(err)
	mon, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(err)
	if resp.StatusCode != 200 {
		fail("monitor endpoint: status %d", resp.StatusCode)
	}
	if _, err := note.Open(mon, note.VerifierList(logV, wit)); err != nil {
		fail("monitor endpoint: %v", err)
	}
	fmt.Println("ok   monitor endpoint note verifies")
	fmt.Println("INTEROP PASSED")
}
