// Command etcd is the etcd server, built from the published
// go.etcd.io/etcd/server/v3 module. It mirrors etcd v3.5's own main.go
// (module go.etcd.io/etcd/v3), which the module proxy does not serve for
// every v3.5 release. Built by ../build.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
