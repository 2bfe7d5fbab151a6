package daemon

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// pendingNotes are what undos and rewinds told the model has yet to hear:
// kept in the store (store.Notes), so that a daemon killed before the next
// prompt still tells it, and carried by the next prompt's input. A note is
// forgotten once the model's view holds it: a prompt killed after its input
// was committed does not tell it twice. Set up by openSession's maker
// (session and db), it lives as long as its session; safe for concurrent
// use.
type pendingNotes struct {
	db      *store.DB
	session string

	mu     sync.Mutex
	unsafe []string     // notes the store refused: told from memory
	taken  []store.Note // handed to the running prompt
}

// add keeps a note for the model's next prompt.
func (p *pendingNotes) add(note string) {
	if p.db != nil && p.db.Notes().Save(context.Background(), p.session, note) == nil {
		return
	}
	p.mu.Lock()
	p.unsafe = append(p.unsafe, note)
	p.mu.Unlock()
}

// take returns the notes the model has not been told as developer
// messages, for the prompt about to run; those its view holds already are
// forgotten. settle forgets the rest once the prompt ran.
func (p *pendingNotes) take(conv *session.Conversation) []json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []json.RawMessage
	for _, n := range p.unsafe {
		out = append(out, session.DeveloperMessage(n))
	}
	p.unsafe = nil
	p.taken = nil
	if p.db == nil {
		return out
	}
	notes, err := p.db.Notes().Pending(context.Background(), p.session)
	if err != nil {
		return out
	}
	for _, n := range notes {
		if told, _ := conv.Told(n.Text); told == n.Text {
			p.taken = append(p.taken, n) // told by a prompt killed before it forgot them: settle does
			continue
		}
		out = append(out, session.DeveloperMessage(n.Text))
		p.taken = append(p.taken, n)
	}
	return out
}

// settle forgets the notes take handed out that the model's view holds
// now; a prompt that never ran leaves them for the next.
func (p *pendingNotes) settle(conv *session.Conversation) {
	p.mu.Lock()
	taken := p.taken
	p.taken = nil
	p.mu.Unlock()
	var ids []int64
	for _, n := range taken {
		if told, _ := conv.Told(n.Text); told == n.Text {
			ids = append(ids, n.ID)
		}
	}
	if p.db != nil {
		_ = p.db.Notes().Forget(context.Background(), ids...) // one left is told again, never lost
	}
}
