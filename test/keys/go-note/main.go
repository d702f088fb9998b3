// A checkpoint verifier built only on Debian's golang.org/x/mod (sumdb/note), for test/keys: GET
// -url (a signed note) and open it with x/mod's note rules under every vkey in -vkeys (comma
// separated, type 0x01 Ed25519); every vkey must have a verifying signature line.
//
// Build (GOPATH mode, no network): GO111MODULE=off GOPATH=/usr/share/gocode go build -o verify main.go
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

func main() {
	url := flag.String("url", "", "URL of a signed note (a checkpoint)")
	vkeys := flag.String("vkeys", "", "comma-separated note verifier keys")
	flag.Parse()
	var list []note.Verifier
	for _, k := range strings.Split(*vkeys, ",") {
		v, err := note.NewVerifier(k)
		if err != nil {
			fmt.Printf("FAIL vkey %q: %v\n", k, err)
			os.Exit(1)
		}
		list = append(list, v)
	}
	resp, err := http.Get(*url)
	if err != nil {
		fmt.Printf("FAIL get: %v\n", err)
		os.Exit(1)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		fmt.Printf("FAIL status %d: %v\n", resp.StatusCode, err)
		os.Exit(1)
	}
	n, err := note.Open(body, note.VerifierList(list...))
	if err != nil {
		fmt.Printf("FAIL note.Open: %v\n", err)
		os.Exit(1)
	}
	if len(n.Sigs) != len(list) {
		fmt.Printf("FAIL %d of %d signatures verified\n", len(n.Sigs), len(list))
		os.Exit(1)
	}
	fmt.Printf("NOTE PASSED %d signatures\n", len(n.Sigs))
}
