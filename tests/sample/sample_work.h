/* Work the sampler's tests sample: two functions of equal cost per call
 * (7:3 calls give 7:3 CPU) and a spin for the other threads. noinline and
 * exported, so each is a frame of its own with a symbol. */
#ifndef OPPROF_TESTS_SAMPLE_WORK_H
#define OPPROF_TESTS_SAMPLE_WORK_H

void sw_work_a(void);
void sw_work_b(void);
void sw_spin_late(void);
void sw_spin_joined(void);

#endif
