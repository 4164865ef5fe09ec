//! `tmux-mcp demo`. (In progress.)

pub fn run() -> anyhow::Result<()> {
    anyhow::bail!("not yet written")
}
