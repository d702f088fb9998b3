// A durable reference tlog-witness (add-checkpoint only), the yardstick of bench/cosign: built
// only on the Go standard library and Debian's golang.org/x/mod (sumdb/note verifies the log's
// signature, sumdb/tlog the consistency proof), like litewitness it makes every cosignature
// durable before answering: one appended record and one fsync per accepted checkpoint, no group
// commit. Ed25519 log keys (type 0x01) and an Ed25519 cosignature/v1 (type 0x04) key only.
//
// Build (GOPATH mode, offline):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= go build -o go-witness main.go
//
// Run: go-witness -listen 127.0.0.1:0 -name NAME -seed HEX32 -logs FILE -state FILE
// FILE for -logs has one "origin vkey" pair per line. The bound address is printed on stdout as
// "listening on ADDR".
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type origin struct {
	mu       sync.Mutex
	verifier note.Verifiers
	size     int64
	root     tlog.Hash
}

type witness struct {
	name    string
	key     ed25519.PrivateKey
	keyID   [4]byte
	origins map[string]*origin
	fileMu  sync.Mutex
	file    *os.File
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	name := flag.String("name", "", "witness name")
	seedHex := flag.String("seed", "", "Ed25519 seed, hex")
	logsPath := flag.String("logs", "", "file of 'origin vkey' lines")
	statePath := flag.String("state", "", "append-only state file")
	flag.Parse()
	seed, err := hex.DecodeString(*seedHex)
	if err != nil || len(seed) != ed25519.SeedSize {
		log.Fatal("-seed must be 32 bytes of hex")
	}
	w := &witness{name: *name, key: ed25519.NewKeyFromSeed(seed), origins: map[string]*origin{}}
	h := sha256.New()
	h.Write([]byte(*name + "\n"))
	h.Write(append([]byte{0x04}, w.key.Public().(ed25519.PublicKey)...))
	copy(w.keyID[:], h.Sum(nil)[:4])
	w.loadLogs(*logsPath)
	w.replay(*statePath)
	w.file, err = os.OpenFile(*statePath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/add-checkpoint", w.addCheckpoint)
	log.Fatal(http.Serve(ln, mux))
}

func (w *witness) loadLogs(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			log.Fatalf("bad logs line %q", line)
		}
		v, err := note.NewVerifier(f[1])
		if err != nil {
			log.Fatalf("%s: %v", f[0], err)
		}
		w.origins[f[0]] = &origin{verifier: note.VerifierList(v), root: tlog.Hash(sha256.Sum256(nil))}
	}
}

// replay reads the state file: one "origin size base64(root)" record per accepted checkpoint.
func (w *witness) replay(path string) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	} else if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		r := strings.Fields(s.Text())
		if len(r) != 3 || w.origins[r[0]] == nil {
			continue // a torn last record, or a log no longer configured
		}
		n, err1 := strconv.ParseInt(r[1], 10, 64)
		root, err2 := tlog.ParseHash(r[2])
		if err1 == nil && err2 == nil {
			w.origins[r[0]].size, w.origins[r[0]].root = n, root
		}
	}
}

func fail(rw http.ResponseWriter, code int, msg string) {
	http.Error(rw, msg, code)
}

func (w *witness) addCheckpoint(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		fail(rw, 405, "POST only")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fail(rw, 400, "read")
		return
	}
	// "old N\n", proof hashes one per line, a blank line, then the signed checkpoint.
	split := bytes.Index(body, []byte("\n\n"))
	if split < 0 {
		fail(rw, 400, "no blank line")
		return
	}
	head := strings.Split(string(body[:split]), "\n")
	if !strings.HasPrefix(head[0], "old ") {
		fail(rw, 400, "no old line")
		return
	}
	old, err := strconv.ParseInt(head[0][4:], 10, 64)
	if err != nil || old < 0 {
		fail(rw, 400, "bad old")
		return
	}
	var proof tlog.TreeProof
	for _, l := range head[1:] {
		h, err := tlog.ParseHash(l)
		if err != nil {
			fail(rw, 400, "bad proof hash")
			return
		}
		proof = append(proof, h)
	}
	msg := body[split+2:]
	nl := bytes.IndexByte(msg, '\n')
	if nl < 0 {
		fail(rw, 400, "bad checkpoint")
		return
	}
	o := w.origins[string(msg[:nl])]
	if o == nil {
		fail(rw, 404, "unknown log")
		return
	}
	n, err := note.Open(msg, o.verifier)
	if err != nil {
		fail(rw, 403, "log signature")
		return
	}
	tree, err := parseCheckpoint(n.Text)
	if err != nil {
		fail(rw, 400, "bad checkpoint body")
		return
	}
	if old > tree.N {
		fail(rw, 400, "old > size")
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if old != o.size {
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(409)
		fmt.Fprintf(rw, "%d\n", o.size)
		return
	}
	if old == tree.N {
		if len(proof) != 0 || tree.Hash != o.root {
			fail(rw, 409, "same size, other root")
			return
		}
	} else if old > 0 {
		if err := tlog.CheckTree(proof, tree.N, tree.Hash, old, o.root); err != nil {
			fail(rw, 422, "consistency proof")
			return
		}
	}
	if err := w.persist(n.Text[:strings.IndexByte(n.Text, '\n')], tree); err != nil {
		fail(rw, 503, "store")
		return
	}
	o.size, o.root = tree.N, tree.Hash
	rw.Write(w.cosign(n.Text))
}

// parseCheckpoint reads a checkpoint body: origin, size, base64 root hash, then extension lines.
func parseCheckpoint(text string) (tlog.Tree, error) {
	l := strings.SplitN(text, "\n", 4)
	if len(l) < 4 {
		return tlog.Tree{}, fmt.Errorf("short checkpoint")
	}
	n, err := strconv.ParseInt(l[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != l[1] {
		return tlog.Tree{}, fmt.Errorf("bad size")
	}
	h, err := tlog.ParseHash(l[2])
	if err != nil {
		return tlog.Tree{}, err
	}
	return tlog.Tree{N: n, Hash: h}, nil
}

// persist appends the record and fsyncs before the answer: the durability of litewitness.
func (w *witness) persist(name string, tree tlog.Tree) error {
	rec := fmt.Sprintf("%s %d %s\n", name, tree.N, tree.Hash)
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	if _, err := w.file.WriteString(rec); err != nil {
		return err
	}
	return w.file.Sync()
}

// cosign is a cosignature/v1 line: Ed25519 over "cosignature/v1\ntime T\n" + the checkpoint text.
func (w *witness) cosign(text string) []byte {
	t := uint64(time.Now().Unix())
	sig := make([]byte, 0, 4+8+ed25519.SignatureSize)
	sig = append(sig, w.keyID[:]...)
	sig = binary.BigEndian.AppendUint64(sig, t)
	sig = append(sig, ed25519.Sign(w.key, []byte(fmt.Sprintf("cosignature/v1\ntime %d\n%s", t, text)))...)
	return []byte("\u2014 " + w.name + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
}
