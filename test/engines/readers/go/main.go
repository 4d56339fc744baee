// Reads an MMDB with MaxMind's Go reader (github.com/oschwald/maxminddb-golang,
// as Debian packages it): one address per line on standard input, the record
// each decodes to as one line of JSON (null when the address has none, and
// for text net.ParseIP does not take: an application would not look it up).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"

	"github.com/oschwald/maxminddb-golang"
)

func main() {
	db, err := maxminddb.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		ip := net.ParseIP(in.Text())
		if ip == nil {
			fmt.Fprintln(out, "null")
			continue
		}
		var record interface{}
		if err := db.Lookup(ip, &record); err != nil {
			panic(err)
		}
		text, err := json.Marshal(record)
		if err != nil {
			panic(err)
		}
		fmt.Fprintln(out, string(text))
	}
}
