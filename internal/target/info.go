package target

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Info is what the server says about itself.
type Info struct {
	Version  string            // server_version
	Settings map[string]string // every setting not at its built-in default
}

// ServerInfo asks the server for its version and non-default settings.
func ServerInfo(ctx context.Context, conn *pgconn.PgConn) (Info, error) {
	info := Info{Version: conn.ParameterStatus("server_version"), Settings: map[string]string{}}
	res := conn.ExecParams(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE source NOT IN ('default', 'override') AND name NOT IN ('application_name', 'client_encoding', 'DateStyle', 'TimeZone', 'lc_messages', 'lc_monetary', 'lc_numeric', 'lc_time', 'default_text_search_config')
		ORDER BY name`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return info, fmt.Errorf("read server settings: %w", res.Err)
	}
	for _, r := range res.Rows {
		info.Settings[string(r[0])] = string(r[1])
	}
	return info, nil
}
