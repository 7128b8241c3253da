package main

import (
	"context"
	"strings"
	"testing"
)

// `c2flow server` refuses bad flags before touching a database, naming
// the flag.
func TestServerFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--db is required"},
		{[]string{"--db", "postgres://u@h:1/d", "--history-shards", "0"}, "--history-shards 0"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "0.0.0.0:7233"}, "IP of an interface"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "localhost:7233"}, "IP of an interface"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "127.0.0.1:x"}, "not a port number"},
		{[]string{"--db", "postgres://u@h:1/d", "--log-level", "loud"}, "--log-level"},
		{[]string{"--db", "mysql://u@h:1/d"}, "scheme"},
		{[]string{"--db", "postgres://u@h:1/d", "extra"}, "unexpected arguments"},
	} {
		err := dispatch(context.Background(), append([]string{"server"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("server %v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}
