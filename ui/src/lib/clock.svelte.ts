// One shared one-second tick for live countdowns; it runs only while something shows one.
export class Ticker {
  now = $state(Date.now());
  private users = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly periodMs = 1000) {}

  /** Starts ticking for one user; call the returned function to stop. */
  acquire(): () => void {
    this.users += 1;
    if (this.timer === null) {
      this.now = Date.now();
      this.timer = setInterval(() => (this.now = Date.now()), this.periodMs);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.users -= 1;
      if (this.users === 0 && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }
}

export const ticker = new Ticker();
