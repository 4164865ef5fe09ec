//! A shell's OSC 133 marks, sans-IO: what they say of a pane's recording.
//!
//! Shells with integration (fish ≥ 4 by default; bash and zsh through
//! their prompt hooks) mark their prompt and each command: `133;A` where
//! the prompt starts, `133;B` where the typed command starts, `133;C` where
//! its output starts, `133;D[;status]` where it ended. Terminals ignore the
//! parameters they do not know (`aid=…`, `cl=…`), and so does this.

use super::osc::Osc;

/// The OSC number of the marks.
pub const MARKS: &[u8] = b"133";

/// One shell mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// `A`: a prompt starts.
    Prompt,
    /// `B`: the prompt ended; what is typed next is the command.
    Input,
    /// `C`: the command's output starts.
    Output,
    /// `D`: the command ended, with its exit status when the shell said it.
    Done(Option<i64>),
}

impl Mark {
    /// The mark an OSC 133 sequence is, if it is one.
    pub fn of(osc: &Osc<'_>) -> Option<Mark> {
        if osc.number != MARKS {
            return None;
        }
        let mut params = osc.payload.split(|&b| b == b';');
        let mark = match params.next()? {
            b"A" => Mark::Prompt,
            b"B" => Mark::Input,
            b"C" => Mark::Output,
            b"D" => Mark::Done(
                params
                    .next()
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .and_then(|s| s.parse().ok()),
            ),
            _ => return None,
        };
        Some(mark)
    }
}

/// The output of the last command a recording shows, by ring offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandOutput {
    /// Just past its `C` mark.
    pub from: u64,
    /// Where its `D` mark starts; `None` while it runs.
    pub to: Option<u64>,
    /// The status its `D` mark carried.
    pub status: Option<i64>,
}

/// What the marks seen so far (in stream order) say.
#[derive(Debug, Default)]
pub struct MarkHistory {
    last: Option<Mark>,
    last_command: Option<CommandOutput>,
}

impl MarkHistory {
    /// Takes the next sequence of the stream in; returns the mark it was.
    pub fn see(&mut self, osc: &Osc<'_>) -> Option<Mark> {
        let mark = Mark::of(osc)?;
        match mark {
            Mark::Output => {
                self.last_command = Some(CommandOutput {
                    from: osc.end,
                    to: None,
                    status: None,
                })
            }
            Mark::Done(status) => {
                // A `D` with no `C` before it (an empty line) ends nothing.
                if let Some(run) = self.last_command.as_mut().filter(|r| r.to.is_none()) {
                    run.to = Some(osc.at);
                    run.status = status;
                }
            }
            Mark::Prompt | Mark::Input => {}
        }
        self.last = Some(mark);
        Some(mark)
    }

    /// The shell sits at a prompt it marked, and the last command it ran
    /// was marked whole (`C`, then `D` with a status): a command typed now
    /// is delimited by its marks. A shell that marks only its prompt, or
    /// stopped marking its commands, is not.
    pub fn at_marked_prompt(&self) -> bool {
        let whole = self
            .last_command
            .is_some_and(|run| run.to.is_some() && run.status.is_some());
        whole && matches!(self.last, Some(Mark::Prompt | Mark::Input | Mark::Done(_)))
    }

    /// The last command whose output the stream showed.
    pub fn last_command(&self) -> Option<CommandOutput> {
        self.last_command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn osc(at: u64, payload: &'static [u8]) -> Osc<'static> {
        Osc {
            at,
            end: at + 10,
            number: MARKS,
            payload,
        }
    }

    #[test]
    fn marks_and_their_parameters() {
        assert_eq!(Mark::of(&osc(0, b"A;cl=m;aid=4")), Some(Mark::Prompt));
        assert_eq!(
            Mark::of(&osc(0, b"D;130;aid=4")),
            Some(Mark::Done(Some(130)))
        );
        assert_eq!(Mark::of(&osc(0, b"D")), Some(Mark::Done(None)));
        assert_eq!(Mark::of(&osc(0, b"C;cmdline_url=ls")), Some(Mark::Output));
        assert_eq!(Mark::of(&osc(0, b"P;k=i")), None);
        let other = Osc {
            number: b"6973",
            ..osc(0, b"A")
        };
        assert_eq!(Mark::of(&other), None);
    }

    #[test]
    fn the_last_command_and_the_prompt_are_read_from_the_marks() {
        let mut h = MarkHistory::default();
        h.see(&osc(0, b"D;0"));
        h.see(&osc(5, b"A"));
        assert!(!h.at_marked_prompt(), "no command seen marked yet");
        h.see(&osc(20, b"C"));
        h.see(&osc(50, b"D;0"));
        h.see(&osc(60, b"A"));
        assert!(h.at_marked_prompt());
        let done = Some(CommandOutput {
            from: 30,
            to: Some(50),
            status: Some(0),
        });
        assert_eq!(h.last_command(), done);
        // An empty line: a D with no C ends nothing.
        h.see(&osc(80, b"D;0"));
        assert_eq!(h.last_command(), done);
        h.see(&osc(90, b"C"));
        assert!(!h.at_marked_prompt(), "a command runs");
        let running = CommandOutput {
            from: 100,
            to: None,
            status: None,
        };
        assert_eq!(h.last_command(), Some(running));
        // The command stopped the marking (`PS0=; PROMPT_COMMAND=`): its C
        // got no D, and the prompt's own marks are not enough.
        h.see(&osc(120, b"A"));
        h.see(&osc(130, b"B"));
        assert!(!h.at_marked_prompt());
        // Marks with no status cannot give one.
        h.see(&osc(140, b"C"));
        h.see(&osc(150, b"D"));
        assert!(!h.at_marked_prompt());
    }
}
