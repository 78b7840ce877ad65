#ifndef WORK_H
#define WORK_H
int work(int x);
#endif
