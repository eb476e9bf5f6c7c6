//! Protocol dialects of Switchyard: classification of provider error answers into the
//! failure taxonomy, and cooldown hints from rate-limit headers. No I/O, clock injected.
