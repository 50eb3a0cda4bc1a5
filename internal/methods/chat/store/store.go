// Package store keeps the chat application's conversations: who owns each,
// its turns in order, and the token usage of every answer.
//
// Two backends implement Store with the same SQL (database/sql) and the
// same behaviour, checked by one shared suite (store/storetest):
//
//   - SQLite (modernc.org/sqlite, no cgo), the embedded default: one file,
//     chat.db, under a data directory, in WAL mode.
//   - PostgreSQL (github.com/jackc/pgx/v5), chosen by a DSN; its tables live
//     in their own schema (default "mcpstack_chat").
//
// Every method takes the user the call is made for. A conversation belongs
// to the user who created it, and to nobody else: for any other user it
// does not exist (ErrNotFound, never "forbidden", so ids cannot be probed).
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ErrNotFound is returned for a conversation that does not exist or
// belongs to another user; the two are indistinguishable on purpose.
var ErrNotFound = errors.New("store: conversation not found")

// ErrExists is returned by Create when the id is taken.
var ErrExists = errors.New("store: conversation id already exists")

// Usage is the token count of one model answer.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	// Estimated is true when the provider reported no usage and the
	// numbers were estimated from the text (about 4 characters a token).
	Estimated bool
}

// Message is one turn of a conversation.
type Message struct {
	Seq       int64 // 1, 2, 3, ... within the conversation; set by the store
	Role      string
	Content   string
	CreatedAt time.Time // set by the store when zero
	// Provider and Model say who answered (assistant turns only).
	Provider string
	Model    string
	Usage    *Usage // assistant turns only; nil when unknown
}

// Conversation is a conversation's summary, with its messages when read
// with Get.
type Conversation struct {
	ID           string
	User         string
	Title        string
	MessageCount int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Messages     []Message // only from Get
}

// ListOptions selects a page of a user's conversations, oldest first (the
// order of creation, which new conversations never disturb, so offsets stay
// valid across pages).
type ListOptions struct {
	Offset int
	Limit  int    // <= 0: DefaultListLimit
	Prefix string // only ids starting with Prefix (taken literally)
}

// DefaultListLimit is the page size of a List without a limit.
const DefaultListLimit = 50

// MaxSearchLimit caps the results of one Search.
const MaxSearchLimit = 100

// SearchHit is a conversation that matched a search: by its title or by
// at least one message.
type SearchHit struct {
	Conversation Conversation // summary, no messages
	Matches      int64        // messages that contain the query
	// First is the first message that contains the query (Seq 0 when only
	// the title matched).
	First Message
}

// Store keeps conversations. Implementations are safe for concurrent use.
type Store interface {
	// Create stores a new conversation of user with id (see NewID), its
	// title, and its first messages (there may be none). An id that
	// exists already is ErrExists.
	Create(ctx context.Context, user, id, title string, msgs ...Message) (*Conversation, error)
	// Append adds messages to the end of a conversation of user, with the
	// next sequence numbers, atomically. It returns the summary after.
	Append(ctx context.Context, user, id string, msgs ...Message) (*Conversation, error)
	// Get returns a conversation of user with all its messages in order.
	Get(ctx context.Context, user, id string) (*Conversation, error)
	// List returns a page of user's conversations (summaries) and whether
	// more follow.
	List(ctx context.Context, user string, opts ListOptions) (convs []*Conversation, more bool, err error)
	// Search finds user's conversations whose title or messages contain
	// query (literally: no wildcards), ignoring case (ASCII letters on
	// SQLite, all letters on PostgreSQL); most recently updated first, at
	// most limit (1..MaxSearchLimit; <= 0 means 10).
	Search(ctx context.Context, user, query string, limit int) ([]*SearchHit, error)
	// Delete removes a conversation of user and its messages.
	Delete(ctx context.Context, user, id string) error
	// Close releases the database.
	Close() error
}

// IDPrefix starts every conversation id.
const IDPrefix = "conv_"

// NewID returns a fresh conversation id: "conv_" and 24 hex digits (96
// random bits), so that ids can neither collide nor be guessed.
func NewID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return IDPrefix + hex.EncodeToString(b[:])
}

// Config chooses and configures a backend.
type Config struct {
	// PostgresDSN selects PostgreSQL when not empty
	// ("postgres://user@host:5432/db?sslmode=disable").
	PostgresDSN string
	// PostgresSchema is the schema the tables live in (default
	// DefaultPostgresSchema). It is created when missing.
	PostgresSchema string
	// DataDir holds the SQLite file (chat.db) otherwise; it is created
	// (mode 0700) when missing. Default: DefaultDataDir().
	DataDir string
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// Quota bounds what one user keeps (zero members: DefaultQuota's).
	Quota Quota
}

// Quota bounds what one user keeps in the store, so that no user can fill
// the disk that everyone's conversations share.
type Quota struct {
	Conversations int   // conversations at most
	Bytes         int64 // bytes of message content at most, all conversations together
}

// DefaultQuota: ten thousand conversations, 64 MiB of text, per user (a
// chat turn is at most 32,000 characters).
var DefaultQuota = Quota{Conversations: 10000, Bytes: 64 << 20}

// ErrQuota is returned by Create and Append when the user's quota would be
// exceeded; nothing is written.
var ErrQuota = errors.New("store: the user's quota is used up")

// orDefault fills the zero members of q from DefaultQuota.
func (q Quota) orDefault() Quota {
	if q.Conversations <= 0 {
		q.Conversations = DefaultQuota.Conversations
	}
	if q.Bytes <= 0 {
		q.Bytes = DefaultQuota.Bytes
	}
	return q
}

// SQLiteFile is the name of the SQLite database under the data directory.
const SQLiteFile = "chat.db"

// Open opens the backend cfg names and brings its schema up to date.
func Open(ctx context.Context, cfg Config) (Store, error) {
	var s *sqlStore
	var err error
	if cfg.PostgresDSN != "" {
		s, err = openPostgres(ctx, cfg.PostgresDSN, cfg.PostgresSchema, cfg.Now)
	} else {
		dir := cfg.DataDir
		if dir == "" {
			dir = DefaultDataDir()
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		s, err = openSQLite(ctx, filepath.Join(dir, SQLiteFile), cfg.Now)
	}
	if err != nil {
		return nil, err
	}
	s.quota = cfg.Quota.orDefault()
	return s, nil
}

// DefaultDataDir is $XDG_DATA_HOME/mcpstack, else ~/.local/share/mcpstack,
// else ./mcpstack-data.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mcpstack")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "share", "mcpstack")
	}
	return "mcpstack-data"
}
