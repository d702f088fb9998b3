// An independent check of the KERI witness role's own log (SPEC §3.6.6, §3.6.10 item 6), built
// only on Debian's golang.org/x/mod (sumdb/note, sumdb/tlog), for test/kel-witness/go-inclusion.test.ts.
// For a witnessed event it GETs /v1/kel/event, opens the inclusion's checkpoint under -log-vkey
// with x/mod's note rules, reads the event's kel-event entry from the log's entry bundle
// (tlog-tiles), checks that the entry names the event (i, s, d, t, witness), and verifies the
// inclusion proof with tlog.CheckRecord. A flipped byte of the entry must then fail.
//
// Build (GOPATH mode, no network): GO111MODULE=off GOPATH=/usr/share/gocode go build -o check main.go
package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

var (
	base    = flag.String("url", "", "the node's base URL")
	pre     = flag.String("pre", "", "the event's prefix")
	sn      = flag.Int64("sn", 0, "the event's sequence number")
	logVkey = flag.String("log-vkey", "", "the node's log vkey (type 0x01)")
	witness = flag.String("witness", "", "the node's KERI witness prefix (B…)")
)

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}

func get(u string) []byte {
	resp, err := http.Get(u)
	if err != nil {
		fail("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		fail("GET %s: HTTP %d %v", u, resp.StatusCode, err)
	}
	return body
}

// c2sp tlog-tiles index path: 3-digit groups, all but the last prefixed with "x".
func tileIndex(n int64) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n >= 1000 {
		n /= 1000
		s = fmt.Sprintf("x%03d/", n%1000) + s
	}
	return s
}

type view struct {
	Event struct {
		D string `json:"d"`
		T string `json:"t"`
		S string `json:"s"`
		I string `json:"i"`
	} `json:"event"`
	Witnessed bool `json:"witnessed"`
	Inclusion *struct {
		LeafIndex  int64    `json:"leaf_index"`
		TreeSize   int64    `json:"tree_size"`
		Hashes     []string `json:"hashes"`
		Checkpoint string   `json:"checkpoint"`
	} `json:"inclusion"`
}

func main() {
	flag.Parse()
	var v view
	if err := json.Unmarshal(get(fmt.Sprintf("%s/v1/kel/event?pre=%s&sn=%d", *base, url.QueryEscape(*pre), *sn)), &v); err != nil {
		fail("event view: %v", err)
	}
	if !v.Witnessed || v.Inclusion == nil {
		fail("the event is not witnessed or has no inclusion")
	}
	inc := v.Inclusion
	verifier, err := note.NewVerifier(*logVkey)
	if err != nil {
		fail("log vkey: %v", err)
	}
	n, err := note.Open([]byte(inc.Checkpoint), note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint: note.Open: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		fail("checkpoint: %d lines", len(lines))
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size != inc.TreeSize {
		fail("checkpoint size %q, inclusion tree_size %d", lines[1], inc.TreeSize)
	}
	rootBytes, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(rootBytes) != tlog.HashSize {
		fail("checkpoint root: %v", err)
	}
	var root tlog.Hash
	copy(root[:], rootBytes)
	var proof tlog.RecordProof
	for _, h := range inc.Hashes {
		b, err := base64.StdEncoding.DecodeString(h)
		if err != nil || len(b) != tlog.HashSize {
			fail("proof hash %q", h)
		}
		var x tlog.Hash
		copy(x[:], b)
		proof = append(proof, x)
	}
	// The entry, from its bundle (partial bundles carry .p/<width>).
	bundle := inc.LeafIndex / 256
	width := size - bundle*256
	path := "tile/entries/" + tileIndex(bundle)
	if width < 256 {
		path += fmt.Sprintf(".p/%d", width)
	}
	data := get(*base + "/log/" + path)
	var entry []byte
	for i := int64(0); i <= inc.LeafIndex%256; i++ {
		if len(data) < 2 {
			fail("entry bundle truncated")
		}
		l := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+l {
			fail("entry bundle truncated")
		}
		entry, data = data[2:2+l], data[2+l:]
	}
	var e map[string]interface{}
	if err := json.Unmarshal(entry, &e); err != nil {
		fail("entry: %v", err)
	}
	want := map[string]string{"v": "auths-anchor/kel-event/v1", "witness": *witness, "i": *pre, "s": strconv.FormatInt(*sn, 16), "d": v.Event.D, "t": v.Event.T}
	for k, w := range want {
		if e[k] != w {
			fail("entry %s is %v, want %s", k, e[k], w)
		}
	}
	if err := tlog.CheckRecord(proof, size, root, inc.LeafIndex, tlog.RecordHash(entry)); err != nil {
		fail("tlog.CheckRecord: %v", err)
	}
	tampered := append([]byte(nil), entry...)
	tampered[len(tampered)/2] ^= 1
	if tlog.CheckRecord(proof, size, root, inc.LeafIndex, tlog.RecordHash(tampered)) == nil {
		fail("a tampered entry verified")
	}
	fmt.Printf("INCLUSION PASSED leaf %d of %d: %s\n", inc.LeafIndex, size, v.Event.D)
}
