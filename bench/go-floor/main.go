// The Go side of bench/floor.ts: the least a Go net/http server does for one
// add-checkpoint-sized request (read the body, answer one text line), with
// -crypto also one Ed25519 verify and one sign per request (what a cosignature
// costs). Prints its URL on stdout. Not a witness: no parsing, no state.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	withCrypto := flag.Bool("crypto", false, "one Ed25519 verify + sign per request")
	flag.Parse()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	line := []byte("— witness.example/w AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n")
	http.HandleFunc("/add-checkpoint", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || len(body) < 128 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if *withCrypto {
			sig := ed25519.Sign(priv, body[:128])
			if !ed25519.Verify(pub, body[:128], sig) {
				panic("verify failed")
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(line)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stdout, "http://%s\n", ln.Addr().String())
	http.Serve(ln, nil)
}
