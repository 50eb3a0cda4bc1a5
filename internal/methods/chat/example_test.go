package chat_test

import (
	"context"
	"log"
	"os"

	"github.com/mcpstack/mcpstack/internal/methods/chat"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// Wiring the chat app into a server over stdio: SQLite under the default
// data directory, the default providers (sampling, openai, echo).
func Example_wiring() {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: store.DefaultDataDir(), PostgresDSN: os.Getenv("MCPSTACK_POSTGRES_DSN")})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ag, err := agent.New(agent.Config{
		Providers: os.Getenv("MCPSTACK_CHAT_PROVIDERS"),
		OpenAI: agent.OpenAIConfig{
			BaseURL: os.Getenv("MCPSTACK_OPENAI_BASE_URL"),
			Model:   os.Getenv("MCPSTACK_OPENAI_MODEL"),
			APIKey:  agent.APIKeyFromEnv(os.Getenv),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	app := chat.New(st, ag) // over HTTP with auth: chat.WithUser(...)
	srv := server.New(app)
	defer srv.Close()
	if err := stdio.Serve(ctx, srv, os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
