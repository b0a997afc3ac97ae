return (;
